"""google-auth verifies the Play simulator's Pub/Sub push token as a receiver would: signature under the published
certificates (certs_url: the simulator's, both formats), audience and lifetime; then issuer, e-mail and
email_verified, which verify_token leaves to the caller. Exit status 0 only if it verifies and every claim holds."""
import argparse, json, sys

import google.auth.transport.requests as greq
from google.oauth2 import id_token

p = argparse.ArgumentParser()
p.add_argument("--token", required=True)
p.add_argument("--audience", required=True)
p.add_argument("--certs-url", required=True)
p.add_argument("--email", required=True)
a = p.parse_args()

claims = id_token.verify_token(a.token, greq.Request(), audience=a.audience, certs_url=a.certs_url, clock_skew_in_seconds=10)
failures = []
if claims.get("iss") not in ("accounts.google.com", "https://accounts.google.com"):
    failures.append(f"iss {claims.get('iss')}")
if claims.get("email") != a.email or claims.get("email_verified") is not True:
    failures.append(f"email {claims.get('email')} verified {claims.get('email_verified')}")
try:
    id_token.verify_token(a.token, greq.Request(), audience="https://elsewhere.example/", certs_url=a.certs_url)
    failures.append("another audience verified")
except Exception:  # ValueError with PEM certificates, pyjwt's InvalidAudienceError with a JWKS
    pass
print(json.dumps({"claims": claims, "failures": failures}))
sys.exit(1 if failures else 0)
