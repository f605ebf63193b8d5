"""Google's own client for the Play Developer API (google-api-python-client with its bundled androidpublisher v3
discovery document, google-auth service-account credentials whose token URI is the simulator's) against the Play
simulator: reads what it serves (purchases, orders, voided purchases) and performs acknowledge, consume and refund. Exit status 0 only if every check holds."""
import argparse, json, sys

from google.oauth2 import service_account
from googleapiclient.discovery import build
from googleapiclient.errors import HttpError

p = argparse.ArgumentParser()
p.add_argument("--base-url", required=True)
p.add_argument("--key-file", required=True)
p.add_argument("--package", required=True)
p.add_argument("--consumable", required=True, help="token of a 3-unit coins_100 purchase")
p.add_argument("--unlock", required=True, help="token of a lifetime_pro purchase")
p.add_argument("--refund-order", required=True, help="order id to refund with revoke")
p.add_argument("--subscription", required=True, help="token of a vip_monthly subscription, not yet acknowledged")
p.add_argument("--revoke-subscription", required=True, help="token of a vip_yearly subscription to revoke")
a = p.parse_args()

failures = []
def check(condition, what):
    if not condition:
        failures.append(what)

info = json.load(open(a.key_file))
creds = service_account.Credentials.from_service_account_info(info, scopes=["https://www.googleapis.com/auth/androidpublisher"])
svc = build("androidpublisher", "v3", credentials=creds, client_options={"api_endpoint": a.base_url + "/"}, cache_discovery=False)
products = svc.purchases().products()

coins = products.get(packageName=a.package, productId="coins_100", token=a.consumable).execute()
check(coins.get("kind") == "androidpublisher#productPurchase", f"kind: {coins.get('kind')}")
check(coins.get("purchaseState") == 0, f"purchaseState: {coins.get('purchaseState')}")
check(coins.get("quantity") == 3, f"quantity: {coins.get('quantity')}")
check(isinstance(coins.get("purchaseTimeMillis"), str) and coins["purchaseTimeMillis"].isdigit(), "purchaseTimeMillis is an int64 string")
check(coins.get("orderId", "").startswith("GPA."), f"orderId: {coins.get('orderId')}")
check(coins.get("obfuscatedExternalAccountId") == "order-42", f"obfuscatedExternalAccountId: {coins.get('obfuscatedExternalAccountId')}")

order = svc.orders().get(packageName=a.package, orderId=coins.get("orderId")).execute()
check(order.get("orderId") == coins.get("orderId") and order.get("purchaseToken") == a.consumable, f"order: {order.get('orderId')}")
check(order.get("state") == "PROCESSED", f"order state: {order.get('state')}")
check(order.get("total", {}).get("currencyCode") == "USD" and order["total"].get("units") == "2" and order["total"].get("nanos") == 970000000,
      f"order total 3 x 0.99: {order.get('total')}")
check(order.get("developerRevenueInBuyerCurrency", {}).get("units") == "2", f"revenue after Google's fee: {order.get('developerRevenueInBuyerCurrency')}")
check((order.get("lineItems") or [{}])[0].get("productId") == "coins_100", f"order line: {order.get('lineItems')}")
check(order.get("buyerAddress", {}).get("buyerCountry") == "US", f"buyer: {order.get('buyerAddress')}")

products.consume(packageName=a.package, productId="coins_100", token=a.consumable).execute()
coins = products.get(packageName=a.package, productId="coins_100", token=a.consumable).execute()
check(coins.get("consumptionState") == 1, f"consumed: {coins.get('consumptionState')}")
check(coins.get("acknowledgementState") == 1, f"acknowledged by consuming: {coins.get('acknowledgementState')}")

products.acknowledge(packageName=a.package, productId="lifetime_pro", token=a.unlock, body={"developerPayload": "judge"}).execute()
unlock = products.get(packageName=a.package, productId="lifetime_pro", token=a.unlock).execute()
check(unlock.get("acknowledgementState") == 1, f"acknowledged: {unlock.get('acknowledgementState')}")
check(unlock.get("developerPayload") == "judge", f"developerPayload: {unlock.get('developerPayload')}")

v2 = svc.purchases().productsv2().getproductpurchasev2(packageName=a.package, token=a.unlock).execute()
check(v2.get("purchaseStateContext", {}).get("purchaseState") == "PURCHASED", f"v2 state: {v2.get('purchaseStateContext')}")
check(v2.get("productLineItem", [{}])[0].get("productId") == "lifetime_pro", "v2 line item")
check(v2.get("acknowledgementState") == "ACKNOWLEDGEMENT_STATE_ACKNOWLEDGED", f"v2 ack: {v2.get('acknowledgementState')}")

svc.orders().refund(packageName=a.package, orderId=a.refund_order, revoke=True).execute()
voided = svc.purchases().voidedpurchases().list(packageName=a.package, type=1, includeQuantityBasedPartialRefund=True).execute()
orders = [v.get("orderId") for v in voided.get("voidedPurchases", [])]
check(a.refund_order in orders, f"refunded order listed: {orders}")
entry = next((v for v in voided.get("voidedPurchases", []) if v.get("orderId") == a.refund_order), {})
check(entry.get("voidedSource") == 1, f"voidedSource developer: {entry.get('voidedSource')}")
check(isinstance(entry.get("voidedTimeMillis"), str), "voidedTimeMillis is an int64 string")

subs = svc.purchases().subscriptionsv2()
sub = subs.get(packageName=a.package, token=a.subscription).execute()
check(sub.get("kind") == "androidpublisher#subscriptionPurchaseV2", f"kind: {sub.get('kind')}")
check(sub.get("subscriptionState") == "SUBSCRIPTION_STATE_ACTIVE", f"state: {sub.get('subscriptionState')}")
check(sub.get("acknowledgementState") == "ACKNOWLEDGEMENT_STATE_PENDING", f"ack: {sub.get('acknowledgementState')}")
item = (sub.get("lineItems") or [{}])[0]
check(item.get("productId") == "vip_monthly" and item.get("offerDetails", {}).get("basePlanId") == "monthly", f"line item: {item}")
check(item.get("autoRenewingPlan", {}).get("recurringPrice", {}).get("units") == "4", f"price: {item.get('autoRenewingPlan')}")
check(item.get("expiryTime", "").endswith("Z"), f"expiryTime: {item.get('expiryTime')}")
svc.purchases().subscriptions().acknowledge(packageName=a.package, subscriptionId="vip_monthly", token=a.subscription, body={}).execute()
svc.purchases().subscriptions().cancel(packageName=a.package, subscriptionId="vip_monthly", token=a.subscription).execute()
sub = subs.get(packageName=a.package, token=a.subscription).execute()
check(sub.get("acknowledgementState") == "ACKNOWLEDGEMENT_STATE_ACKNOWLEDGED", f"ack after: {sub.get('acknowledgementState')}")
check(sub.get("subscriptionState") == "SUBSCRIPTION_STATE_CANCELED", f"canceled: {sub.get('subscriptionState')}")
check("developerInitiatedCancellation" in sub.get("canceledStateContext", {}), f"canceled by: {sub.get('canceledStateContext')}")
subs.revoke(packageName=a.package, token=a.revoke_subscription, body={"revocationContext": {"fullRefund": {}}}).execute()
revoked = subs.get(packageName=a.package, token=a.revoke_subscription).execute()
check(revoked.get("subscriptionState") == "SUBSCRIPTION_STATE_EXPIRED", f"revoked: {revoked.get('subscriptionState')}")

try:
    products.get(packageName=a.package, productId="coins_100", token="no-such-token").execute()
    failures.append("an unknown token was answered")
except HttpError as e:
    check(e.status_code == 404, f"unknown token status: {e.status_code}")
    check((e.error_details or [{}])[0].get("reason") == "purchaseTokenNotFound", f"reason: {e.error_details}")

print(json.dumps({"failures": failures, "checked": "products.get/consume/acknowledge, productsv2, subscriptionsv2.get/revoke, subscriptions.acknowledge/cancel, orders.refund, voidedpurchases.list, errors"}))
sys.exit(1 if failures else 0)
