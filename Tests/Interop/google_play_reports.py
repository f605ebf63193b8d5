"""Google's own client for Cloud Storage (google-api-python-client with its bundled storage v1 discovery document,
google-auth service-account credentials whose token URI is the simulator's) reads the Play simulator's reports
bucket as it reads a developer account's: lists the earnings reports, downloads one, opens the ZIP and reads the CSV
with Python's own modules, and checks the charges, Google's fees and the refunds against what the caller expects.
Exit status 0 only if every check holds."""
import argparse, csv, io, json, sys, zipfile
from decimal import Decimal

from google.oauth2 import service_account
from googleapiclient.discovery import build
from googleapiclient.errors import HttpError

p = argparse.ArgumentParser()
p.add_argument("--base-url", required=True)
p.add_argument("--key-file", required=True)
p.add_argument("--bucket", required=True)
p.add_argument("--month", required=True, help="YYYYMM of the one published report")
p.add_argument("--charges", required=True, help='JSON {"orderId": "4.99"}: every order charged in the month')
p.add_argument("--refunds", required=True, help='JSON {"orderId": "4.99"}: every order refunded in the month')
a = p.parse_args()

failures = []
def check(condition, what):
    if not condition:
        failures.append(what)

info = json.load(open(a.key_file))
creds = service_account.Credentials.from_service_account_info(info, scopes=["https://www.googleapis.com/auth/devstorage.read_only"])
svc = build("storage", "v1", credentials=creds, client_options={"api_endpoint": a.base_url + "/storage/v1/"}, cache_discovery=False)

listed = svc.objects().list(bucket=a.bucket, prefix="earnings/").execute()
names = [o.get("name") for o in listed.get("items", [])]
check(names == [f"earnings/earnings_{a.month}_" + names[0].rsplit("_", 1)[-1]] if names else False, f"one report for {a.month}: {names}")
check(listed.get("kind") == "storage#objects", f"kind: {listed.get('kind')}")

data = svc.objects().get_media(bucket=a.bucket, object=names[0]).execute() if names else b""
archive = zipfile.ZipFile(io.BytesIO(data))
check(archive.testzip() is None, "every entry passes its CRC")
members = archive.namelist()
check(len(members) == 1 and members[0].endswith(".csv"), f"one CSV inside: {members}")
rows = list(csv.DictReader(io.StringIO(archive.read(members[0]).decode("utf-8"))))

charges, refunds, fees = {}, {}, {}
for row in rows:
    order, kind, amount = row["Description"], row["Transaction Type"], Decimal(row["Amount (Buyer Currency)"])
    check(row["Merchant Currency"] == row["Buyer Currency"] and row["Amount (Merchant Currency)"] == row["Amount (Buyer Currency)"],
          f"{order}: merchant amount")
    if kind == "Charge":
        charges[order] = charges.get(order, Decimal(0)) + amount
    elif kind == "Charge refund":
        refunds[order] = refunds.get(order, Decimal(0)) - amount
    elif kind in ("Google fee", "Google fee refund"):
        fees[order] = fees.get(order, Decimal(0)) + amount
    else:
        failures.append(f"{order}: unexpected type {kind}")
expected_charges = {k: Decimal(v) for k, v in json.loads(a.charges).items()}
expected_refunds = {k: Decimal(v) for k, v in json.loads(a.refunds).items()}
check(charges == expected_charges, f"charges: {charges} != {expected_charges}")
check(refunds == expected_refunds, f"refunds: {refunds} != {expected_refunds}")
for order, charged in charges.items():
    kept = charged - refunds.get(order, Decimal(0))
    # Google's 15 %, on what was kept, to the milliunit (the simulator rounds each line down).
    check(abs(fees.get(order, Decimal(0)) + kept * Decimal("0.15")) < Decimal("0.002"), f"{order}: fee {fees.get(order)} on {kept}")

try:
    svc.objects().list(bucket="pubsite_prod_rev_someone_else", prefix="earnings/").execute()
    failures.append("another account's bucket was listed")
except HttpError as e:
    check(e.status_code == 404, f"foreign bucket status: {e.status_code}")

print(json.dumps({"failures": failures, "checked": "objects.list, objects.get (media), ZIP, CSV, charges, fees, refunds, errors"}))
sys.exit(1 if failures else 0)
