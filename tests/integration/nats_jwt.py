"""Makes a NATS operator-mode setup for a test, without nsc (not in
Debian): an operator, an account with JetStream, a user of it, and a user
of an account the server does not know, as NKeys (Ed25519, base32 with a
CRC-16) and JWTs signed with them (alg ed25519-nkey).

Writes into DIR: server.conf (operator, resolver MEMORY, the account and
the system account preloaded), user.creds and stranger.creds (JWT and seed, as nsc writes
them). Usage: nats_jwt.py DIR"""
import base64
import hashlib
import json
import os
import sys
import time

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives import serialization

PREFIX = {"seed": 18 << 3, "operator": 14 << 3, "account": 0, "user": 20 << 3}


def crc16(data):
    crc = 0
    for b in data:
        crc ^= b << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) if crc & 0x8000 else (crc << 1)
            crc &= 0xFFFF
    return crc


def b32(raw):
    return base64.b32encode(raw + crc16(raw).to_bytes(2, "little")).decode().rstrip("=")


def b64url(raw):
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


class NKey:
    def __init__(self, kind):
        self.kind = kind
        self.raw_seed = os.urandom(32)
        self.key = Ed25519PrivateKey.from_private_bytes(self.raw_seed)
        pub = self.key.public_key().public_bytes(serialization.Encoding.Raw,
                                                 serialization.PublicFormat.Raw)
        self.public = b32(bytes([PREFIX[kind]]) + pub)
        p = PREFIX[kind]
        self.seed = b32(bytes([PREFIX["seed"] | (p >> 5), (p & 31) << 3]) + self.raw_seed)


def jwt(issuer, subject, name, nats):
    claims = {"iat": int(time.time()), "iss": issuer.public, "name": name,
              "sub": subject.public, "nats": nats}
    claims["jti"] = base64.b32encode(hashlib.sha256(
        json.dumps(claims, sort_keys=True).encode()).digest()).decode().rstrip("=")
    head = b64url(json.dumps({"typ": "JWT", "alg": "ed25519-nkey"}).encode())
    body = b64url(json.dumps(claims).encode())
    sig = issuer.key.sign((head + "." + body).encode())
    return head + "." + body + "." + b64url(sig)


def creds(user_jwt, user):
    return ("-----BEGIN NATS USER JWT-----\n%s\n------END NATS USER JWT------\n\n"
            "-----BEGIN USER NKEY SEED-----\n%s\n------END USER NKEY SEED------\n"
            % (user_jwt, user.seed))


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    op, acct, user, sys_acct = NKey("operator"), NKey("account"), NKey("user"), NKey("account")
    other_acct, stranger = NKey("account"), NKey("user")
    unlimited = {"subs": -1, "data": -1, "payload": -1, "imports": -1, "exports": -1,
                 "wildcards": True, "conn": -1, "leaf": -1,
                 "mem_storage": -1, "disk_storage": -1, "streams": -1, "consumer": -1}
    op_jwt = jwt(op, op, "madf-test-operator", {"type": "operator", "version": 2})
    acct_jwt = jwt(op, acct, "madf", {"type": "account", "version": 2, "limits": unlimited})
    sys_jwt = jwt(op, sys_acct, "SYS", {"type": "account", "version": 2,
                                         "limits": {"subs": -1, "data": -1, "payload": -1,
                                                    "imports": -1, "exports": -1,
                                                    "wildcards": True, "conn": -1, "leaf": -1}})
    user_nats = {"type": "user", "version": 2, "pub": {}, "sub": {},
                 "subs": -1, "data": -1, "payload": -1}
    with open(os.path.join(out, "server.conf"), "w") as f:
        f.write('operator: "%s"\nsystem_account: %s\nresolver: MEMORY\n'
                'resolver_preload: {\n  %s: "%s"\n  %s: "%s"\n}\n'
                % (op_jwt, sys_acct.public, acct.public, acct_jwt, sys_acct.public, sys_jwt))
    for name, issuer, u in (("user", acct, user), ("stranger", other_acct, stranger)):
        path = os.path.join(out, name + ".creds")
        with open(path, "w") as f:
            f.write(creds(jwt(issuer, u, name, user_nats), u))
        os.chmod(path, 0o600)


if __name__ == "__main__":
    main()
