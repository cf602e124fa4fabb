#!/usr/bin/env python3
"""A real S3-compatible store on loopback for the object-storage tests, and a reader for it.

Runs in the tests' venv (.venv-tests: moto[server] and boto3, from Scripts/install-deps).

    s3_store.py serve --bucket NAME [--also NAME[@REGION] ...] [--no-auth] [--tls-cert PEM --tls-key PEM] --log FILE --faults FILE
        Starts moto's S3 server, and in front of it a proxy that logs every request and can
        fail some. Prints one JSON line on stdout and serves until stdin closes:
          {"endpoint": "http://127.0.0.1:PORT", "store": "http://127.0.0.1:PORT2",
           "access_key": "...", "secret_key": "...", "bucket": "NAME"}
        "endpoint" is the proxy (what imgfetch is given; https with --tls-cert), "store" is moto itself.
        With auth, moto also has a role ("role_arn") that any key or web identity token may assume,
        allowed all of S3. The proxy passes STS requests (POST / with an Action) on to moto; it checks
        AssumeRoleWithWebIdentity's token against --web-identity-token and signs it for moto (which
        wants a signature where AWS does not). Temporary keys from moto's STS are accepted with their
        session token. "credentials_endpoint" serves a container's credentials (GET /container, with
        --container-token as its Authorization) and IMDSv2 (PUT /latest/api/token, then
        /latest/meta-data/iam/security-credentials/ROLE): new keys of the role at each request, which
        the proxy refuses (400 ExpiredToken) --keys-expire-after seconds later, and whose stated
        Expiration is half that plus ten minutes (a client that renews ten minutes ahead renews in time).
        The proxy checks every request's signature as AWS documents it (SigV4, S3's canonical
        URI: the path decoded, then encoded once) and the body against x-amz-content-sha256, and
        answers 403 SignatureDoesNotMatch or 400 XAmzContentSHA256Mismatch itself. With auth
        (the default), moto checks the signature too, against an IAM user the script creates,
        whose key is printed; --no-auth turns moto's check off (it, and boto3's requests to it,
        fail on keys with '=', '+' or non-ASCII characters, which AWS accepts).
        --log FILE gets one JSON line per request, once answered:
          {"method": "PUT", "key": "prefix/a.jpg", "status": 200, "bytes": 1234, "query": "", "signer": "AKIA…",
           "host": "127.0.0.1"}
        A request to BUCKET.s3.localhost:PORT (virtual-hosted style; libcurl resolves any
        *.localhost to loopback, and moto reads the bucket from the host) has its key in the path.
        --faults FILE, read at each request, is JSON (or absent):
          {"status": 503, "rules": [{"method": "PUT", "suffix": ".tar", "times": 2, "query": "uploadId"}]}
        A rule fails its first `times` matching requests (-1: every one) with `status` (counted
        afresh whenever the file changes),
        without passing them on; "query", if given, must be in the request's query string.
        A rule may give its own "status", "body" (sent instead of a SlowDown error),
        "headers" (an object of extra response headers) and "delay" (seconds to wait first);
        with "pass": true, the request is passed on after the delay.
        The log also gets STS requests (key "sts:ACTION") and the endpoints' (key "endpoint:PATH").

    s3_store.py list  --store URL --bucket NAME [--prefix P]   -> JSON lines {key, size, sha256, content_type, etag, metadata}
    s3_store.py uploads --store URL --bucket NAME [--prefix P] -> JSON lines {key, upload_id}: multipart uploads in progress
    s3_store.py start-upload --store URL --bucket NAME --key K  -> starts one with a part, and leaves it in progress
    s3_store.py get   --store URL --bucket NAME --key K --out FILE
    s3_store.py put   --store URL --bucket NAME --key K --file FILE
    s3_store.py delete --store URL --bucket NAME --key K
        Read and change the store with boto3 (credentials from AWS_ACCESS_KEY_ID and
        AWS_SECRET_ACCESS_KEY).
"""
import argparse
import hashlib
import hmac
import http.client
import http.server
import json
import os
import re
import socket
import sys
import threading
import time
import urllib.parse


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


AUTHORIZATION = re.compile(r"AWS4-HMAC-SHA256 Credential=([^/]+)/(\d{8})/([^/]+)/([^/]+)/aws4_request, ?"
                           r"SignedHeaders=([a-z0-9;-]+), ?Signature=([0-9a-f]{64})$")


def signature_problem(method, target, headers, body, secrets):
    """Why the request's SigV4 signature or payload hash is wrong, by AWS's documented rules for
    S3; None when both are right. `headers` maps lowercase names to values; `secrets(key_id)` is
    the key's secret and session token (None for an IAM user's key), or None for an unknown key."""
    match = AUTHORIZATION.match(headers.get("authorization", ""))
    if not match:
        return 403, "SignatureDoesNotMatch", "no AWS4-HMAC-SHA256 Authorization header"
    key_id, day, region, service, signed, signature = match.groups()
    known = secrets(key_id)
    if known is None:
        return 403, "InvalidAccessKeyId", f"unknown key {key_id}"
    secret, token = known
    if token is not None and headers.get("x-amz-security-token") != token:
        return 403, "InvalidToken", "temporary keys without their session token"
    payload = headers.get("x-amz-content-sha256", "")
    if payload != "UNSIGNED-PAYLOAD" and payload != hashlib.sha256(body).hexdigest():
        return 400, "XAmzContentSHA256Mismatch", "the body's SHA-256 is not x-amz-content-sha256"
    names = signed.split(";")
    if "host" not in names or any(name not in headers for name in names):
        return 403, "SignatureDoesNotMatch", f"signed headers {signed} are not all sent"
    if not hmac.compare_digest(sign(method, target, headers, payload, match.groups(), secret), signature):
        return 403, "SignatureDoesNotMatch", "the signature is not the canonical request's"
    return None


def sign(method, target, headers, payload, authorization, secret, query_safe="-_.~"):
    """The SigV4 signature of a request, from its Authorization header's fields. AWS encodes every
    byte of a query value but the unreserved ones; `query_safe` may keep more (moto's way)."""
    _, day, region, service, signed, _ = authorization
    parts = urllib.parse.urlsplit(target)
    uri = urllib.parse.quote(urllib.parse.unquote(parts.path), safe="/~")
    pairs = [pair.partition("=") for pair in parts.query.split("&") if pair]
    query = "&".join(sorted(f"{urllib.parse.quote(urllib.parse.unquote(k), safe=query_safe)}="
                            f"{urllib.parse.quote(urllib.parse.unquote(v), safe=query_safe)}" for k, _, v in pairs))
    names = signed.split(";")
    canonical_headers = "".join(f"{name}:{' '.join(headers[name].split())}\n" for name in names)
    request = "\n".join([method, uri, query, canonical_headers, signed, payload])
    scope = f"{day}/{region}/{service}/aws4_request"
    to_sign = "\n".join(["AWS4-HMAC-SHA256", headers.get("x-amz-date", ""), scope,
                         hashlib.sha256(request.encode()).hexdigest()])
    key = ("AWS4" + secret).encode()
    for part in (day, region, service, "aws4_request"):
        key = hmac.new(key, part.encode(), hashlib.sha256).digest()
    return hmac.new(key, to_sign.encode(), hashlib.sha256).hexdigest()


ROLE = "imgfetch-role"
ROLE_ARN = f"arn:aws:iam::123456789012:role/{ROLE}"
# What an endpoint's keys say of their lifetime beyond the store's own limit (`--keys-expire-after`):
# a client that renews ten minutes ahead, as the AWS SDKs and imgfetch do, renews in time.
RENEWAL_MARGIN = 600


def headers_lower(headers):
    return {name.lower(): value for name, value in headers.items()}


def client(store):
    import boto3
    return boto3.client("s3", endpoint_url=store, region_name="us-east-1",
                        aws_access_key_id=os.environ.get("AWS_ACCESS_KEY_ID", "test"),
                        aws_secret_access_key=os.environ.get("AWS_SECRET_ACCESS_KEY", "test"))


def serve(args):
    if not args.no_auth:
        # Every request after the first five (the IAM user, its key and policy, the role and its
        # policy) is checked.
        os.environ["INITIAL_NO_AUTH_ACTION_COUNT"] = "5"
    # Parts of 1 KiB and up, so that the tests can make multipart uploads of small files (S3: 5 MiB).
    os.environ["S3_UPLOAD_PART_MIN_SIZE"] = "1024"
    os.environ["MOTO_S3_DEFAULT_KEY_BUFFER_SIZE"] = str(16 << 20)
    from moto.server import ThreadedMotoServer
    import boto3

    store_port = free_port()
    moto = ThreadedMotoServer(ip_address="127.0.0.1", port=store_port, verbose=False)
    moto.start()
    store = f"http://127.0.0.1:{store_port}"
    access_key, secret_key = "test", "test"
    if not args.no_auth:
        iam = boto3.client("iam", endpoint_url=store, region_name="us-east-1",
                           aws_access_key_id="setup", aws_secret_access_key="setup")
        iam.create_user(UserName="imgfetch")
        key = iam.create_access_key(UserName="imgfetch")["AccessKey"]
        iam.put_user_policy(UserName="imgfetch", PolicyName="s3", PolicyDocument=json.dumps(
            {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": ["s3:*", "sts:*"], "Resource": "*"}]}))
        access_key, secret_key = key["AccessKeyId"], key["SecretAccessKey"]
        # A role anyone may assume (with keys, or with a web identity token), allowed all of S3:
        # what web identity, role_arn profiles and the fake credential endpoints hand out keys of.
        iam = boto3.client("iam", endpoint_url=store, region_name="us-east-1",
                           aws_access_key_id=access_key, aws_secret_access_key=secret_key)
        iam.create_role(RoleName=ROLE, AssumeRolePolicyDocument=json.dumps({"Version": "2012-10-17", "Statement": [
            {"Effect": "Allow", "Principal": {"AWS": "*"}, "Action": ["sts:AssumeRole", "sts:AssumeRoleWithWebIdentity"]}]}))
        iam.put_role_policy(RoleName=ROLE, PolicyName="s3", PolicyDocument=json.dumps(
            {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "s3:*", "Resource": "*"}]}))
    boto3.client("s3", endpoint_url=store, region_name="us-east-1", aws_access_key_id=access_key,
                 aws_secret_access_key=secret_key).create_bucket(Bucket=args.bucket)
    # Each bucket's region: a request signed for another region is refused as AWS refuses it
    # (moto does not check).
    regions = {args.bucket: "us-east-1"}
    for extra in args.also:
        # NAME@REGION: a bucket in another region than us-east-1, as AWS makes one.
        name, _, region = extra.partition("@")
        region = region or "us-east-1"
        regions[name] = region
        client = boto3.client("s3", endpoint_url=store, region_name=region, aws_access_key_id=access_key,
                              aws_secret_access_key=secret_key)
        if region == "us-east-1":
            client.create_bucket(Bucket=name)
        else:
            client.create_bucket(Bucket=name, CreateBucketConfiguration={"LocationConstraint": region})

    counts = {}
    lock = threading.Lock()

    def fault(method, key, query):
        try:
            with open(args.faults) as file:
                text = file.read()
            faults = json.loads(text)
        except (OSError, ValueError):
            return None
        with lock:
            # New rules count afresh: a rule's count belongs to the file it came in.
            if counts.get("text") != text:
                counts.clear()
                counts["text"] = text
        for number, rule in enumerate(faults.get("rules", [])):
            if rule.get("method", method) != method or not key.endswith(rule.get("suffix", "")) \
                    or rule.get("query", "") not in query:
                continue
            with lock:
                seen = counts.get(number, 0)
                counts[number] = seen + 1
            if rule.get("times", -1) < 0 or seen < rule["times"]:
                time.sleep(rule.get("delay", 0))
                if rule.get("pass"):
                    return None
                return rule.get("status", faults.get("status", 503)), rule.get("body"), rule.get("headers", {})
        return None

    def log(method, key, status, size, query, signer="", host=""):
        with lock, open(args.log, "a") as out:
            out.write(json.dumps({"method": method, "key": key, "status": status, "bytes": size, "query": query,
                                  "signer": signer, "host": host}) + "\n")

    # Keys handed out by the credential endpoints: key id -> the time the store refuses them from.
    issued = {}

    def secrets(key_id):
        """The secret and session token of a key moto knows: the IAM user's, or temporary keys
        from its STS (web identity, AssumeRole, the endpoints below)."""
        if key_id == access_key:
            return secret_key, None
        if args.no_auth:
            return None
        from moto.sts.models import sts_backends
        for regions in sts_backends.values():
            for backend in regions.values():
                for role in backend.assumed_roles:
                    if role.access_key_id == key_id:
                        return role.secret_access_key, role.session_token
        return None

    def expired(key_id):
        with lock:
            return key_id in issued and time.time() >= issued[key_id]

    def temporary_keys(token_field):
        """New keys of the role, as a credential endpoint answers them (JSON)."""
        sts = boto3.client("sts", endpoint_url=store, region_name="us-east-1",
                           aws_access_key_id=access_key, aws_secret_access_key=secret_key)
        keys = sts.assume_role(RoleArn=ROLE_ARN, RoleSessionName="endpoint")["Credentials"]
        now = time.time()
        with lock:
            issued[keys["AccessKeyId"]] = now + args.keys_expire_after
        said = now + args.keys_expire_after / 2 + RENEWAL_MARGIN
        return {"Code": "Success", "AccessKeyId": keys["AccessKeyId"], "SecretAccessKey": keys["SecretAccessKey"],
                token_field: keys["SessionToken"], "Expiration": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(said))}

    class Endpoints(http.server.BaseHTTPRequestHandler):
        """A container's credential endpoint (GET /container, with the Authorization token
        `--container-token`) and EC2's instance metadata, version 2 only (PUT /latest/api/token,
        then the role's name and keys with the token)."""
        protocol_version = "HTTP/1.1"

        def log_message(self, *_):
            pass

        def answer(self, status, body, content_type="application/json"):
            payload = body.encode()
            log(self.command, "endpoint:" + self.path, status, 0, "")
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def do_PUT(self):
            length = int(self.headers.get("Content-Length") or 0)
            if length:
                self.rfile.read(length)
            if self.path == "/latest/api/token" and self.headers.get("X-aws-ec2-metadata-token-ttl-seconds"):
                return self.answer(200, "metadata-token", "text/plain")
            self.answer(400, "{}")

        def do_GET(self):
            base = "/latest/meta-data/iam/security-credentials/"
            if self.path == "/container":
                if self.headers.get("Authorization") != args.container_token:
                    return self.answer(401, json.dumps({"message": "wrong authorization token"}))
                return self.answer(200, json.dumps(temporary_keys("Token")))
            if self.path.startswith(base):
                if self.headers.get("X-aws-ec2-metadata-token") != "metadata-token":
                    return self.answer(401, "", "text/plain")
                if self.path == base:
                    return self.answer(200, ROLE, "text/plain")
                if self.path == base + ROLE:
                    return self.answer(200, json.dumps(temporary_keys("Token")))
            self.answer(404, "", "text/plain")

    def sts(handler, body):
        """STS, passed on to moto. AssumeRoleWithWebIdentity is unsigned (as AWS takes it); moto
        wants a signature on every request, so the proxy checks the token against `--web-identity-token`
        and signs the request with the IAM user's key before passing it on."""
        form = dict(urllib.parse.parse_qsl(body.decode()))
        action = form.get("Action", "")
        headers = {name: value for name, value in handler.headers.items() if name.lower() != "expect"}
        if action == "AssumeRoleWithWebIdentity":
            if form.get("WebIdentityToken") != args.web_identity_token:
                payload = ("<ErrorResponse><Error><Code>InvalidIdentityToken</Code><Message>the token is not "
                           "the one issued</Message></Error></ErrorResponse>").encode()
                log("POST", "sts:" + action, 400, len(body), "")
                handler.send_response(400)
                handler.send_header("Content-Length", str(len(payload)))
                handler.end_headers()
                handler.wfile.write(payload)
                return
            from botocore.auth import SigV4Auth
            from botocore.awsrequest import AWSRequest
            from botocore.credentials import Credentials
            request = AWSRequest(method="POST", url=store + "/", data=body,
                                 headers={"Content-Type": handler.headers.get("Content-Type")})
            SigV4Auth(Credentials(access_key, secret_key), "sts", "us-east-1").add_auth(request)
            headers = dict(request.headers.items())
        upstream = http.client.HTTPConnection("127.0.0.1", store_port, timeout=60)
        upstream.request("POST", "/", body=body, headers=headers)
        response = upstream.getresponse()
        payload = response.read()
        log("POST", "sts:" + action, response.status, len(body), "")
        handler.send_response(response.status)
        handler.send_header("Content-Type", response.getheader("Content-Type") or "text/xml")
        handler.send_header("Content-Length", str(len(payload)))
        handler.end_headers()
        handler.wfile.write(payload)
        upstream.close()

    class Proxy(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *_):
            pass

        def relay(self):
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else b""
            path = urllib.parse.urlsplit(self.path).path
            if self.command == "POST" and path == "/" and b"Action=" in body:
                return sts(self, body)
            headers = {name.lower(): value for name, value in self.headers.items()}
            # Virtual-hosted style (BUCKET.s3.localhost:PORT, which libcurl resolves to loopback, and
            # moto reads the bucket from) or path style (/BUCKET/KEY).
            host = headers.get("host", "").rsplit(":", 1)[0]
            if host.endswith(".localhost") and host.count(".") >= 2:
                bucket = host.split(".")[0]
                key = urllib.parse.unquote(path[1:])
            else:
                bucket = path.split("/")[1] if path.count("/") >= 1 else ""
                key = urllib.parse.unquote(path.split("/", 2)[2]) if path.count("/") >= 2 else ""
            injected = fault(self.command, key, urllib.parse.urlsplit(self.path).query)
            refusal = signature_problem(self.command, self.path, headers, body, secrets)
            signed_by = AUTHORIZATION.match(headers.get("authorization", ""))
            signer = signed_by.group(1) if signed_by else ""
            if not refusal and signer and expired(signer):
                refusal = 400, "ExpiredToken", "The provided token has expired."
            region_header = {}
            if not refusal and signed_by and bucket in regions and signed_by.group(3) != regions[bucket]:
                # AWS's answer to a request signed for the wrong region: 400, with the bucket's
                # region in a header.
                refusal = 400, "AuthorizationHeaderMalformed", (f"the region '{signed_by.group(3)}' is wrong; "
                                                               f"expecting '{regions[bucket]}'")
                region_header = {"x-amz-bucket-region": regions[bucket]}
            if refusal or injected:
                status, code, message = refusal or (injected[0], "SlowDown", f"injected {injected[0]}")
                payload = f"<?xml version=\"1.0\"?><Error><Code>{code}</Code><Message>{message}</Message></Error>".encode()
                extra = region_header
                if not refusal and injected[1] is not None:
                    payload = injected[1].encode()
                if not refusal:
                    extra = injected[2]
                log(self.command, key, status, len(body), urllib.parse.urlsplit(self.path).query, signer, host)
                self.send_response(status)
                for name, value in extra.items():
                    self.send_header(name, value)
                self.send_header("Content-Type", "application/xml")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(payload)
            else:
                upstream = http.client.HTTPConnection("127.0.0.1", store_port, timeout=60)
                headers = {name: value for name, value in self.headers.items() if name.lower() != "expect"}
                target = self.path
                query = urllib.parse.urlsplit(target).query
                if "%2F" in query.upper() and signed_by and secrets(signed_by.group(1)):
                    # moto's own check canonicalizes a "/" in a query value unencoded, where AWS
                    # encodes it (%2F), and so refuses a request signed by AWS's rules (a prefix=
                    # of a list). Checked above by AWS's rules, it is passed on with the "/" as it
                    # is and signed again as moto expects.
                    fields = signed_by.groups()
                    target = urllib.parse.urlsplit(target)._replace(query=query.replace("%2F", "/").replace("%2f", "/")).geturl()
                    resigned = sign(self.command, target, headers_lower(headers), headers_lower(headers).get("x-amz-content-sha256", ""),
                                    fields, secrets(fields[0])[0], query_safe="-_.~/")
                    authorization = headers_lower(headers)["authorization"]
                    for name in list(headers):
                        if name.lower() == "authorization":
                            headers[name] = authorization[:authorization.rindex("Signature=")] + "Signature=" + resigned
                upstream.request(self.command, target, body=body if self.command in ("PUT", "POST") else None,
                                 headers=headers)
                response = upstream.getresponse()
                payload = response.read()
                status = response.status
                # Logged before the client has its answer: a test that reads the log once
                # imgfetch is done finds every request in it.
                log(self.command, key, status, len(body), urllib.parse.urlsplit(self.path).query, signer, host)
                self.send_response(status)
                for name, value in response.getheaders():
                    if name.lower() not in ("content-length", "transfer-encoding", "connection", "server", "date"):
                        self.send_header(name, value)
                self.send_header("Content-Length", str(len(payload) if self.command != "HEAD"
                                                       else response.getheader("Content-Length") or 0))
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(payload)
                upstream.close()

        do_GET = do_PUT = do_HEAD = do_DELETE = do_POST = relay

    proxy = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Proxy)
    proxy.daemon_threads = True
    scheme = "http"
    if args.tls_cert:
        import ssl
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(args.tls_cert, args.tls_key)
        proxy.socket = context.wrap_socket(proxy.socket, server_side=True)
        scheme = "https"
    threading.Thread(target=proxy.serve_forever, daemon=True).start()
    endpoints = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Endpoints)
    endpoints.daemon_threads = True
    threading.Thread(target=endpoints.serve_forever, daemon=True).start()
    print(json.dumps({"endpoint": f"{scheme}://127.0.0.1:{proxy.server_address[1]}", "store": store,
                      "access_key": access_key, "secret_key": secret_key, "bucket": args.bucket,
                      "credentials_endpoint": f"http://127.0.0.1:{endpoints.server_address[1]}", "role_arn": ROLE_ARN}),
          flush=True)
    sys.stdin.read()
    proxy.shutdown()
    endpoints.shutdown()
    moto.stop()


def main():
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers(dest="command", required=True)
    s = sub.add_parser("serve")
    s.add_argument("--bucket", required=True)
    s.add_argument("--also", action="append", default=[], metavar="NAME[@REGION]", help="another bucket")
    s.add_argument("--no-auth", action="store_true")
    s.add_argument("--tls-cert")
    s.add_argument("--tls-key")
    s.add_argument("--log", required=True)
    s.add_argument("--faults", required=True)
    s.add_argument("--web-identity-token", default="web-identity-token")
    s.add_argument("--container-token", default="container-token")
    s.add_argument("--keys-expire-after", type=float, default=3600,
                   help="the store refuses keys from the credential endpoints this many seconds after they were issued")
    for name in ("list", "get", "put", "delete", "uploads", "start-upload"):
        p = sub.add_parser(name)
        p.add_argument("--store", required=True)
        p.add_argument("--bucket", required=True)
        p.add_argument("--prefix", default="")
        p.add_argument("--key")
        p.add_argument("--out")
        p.add_argument("--file")
    args = parser.parse_args()
    if args.command == "serve":
        serve(args)
    elif args.command == "list":
        s3 = client(args.store)
        # Filtered here, not by the request: moto's signature check fails on a Prefix parameter.
        for page in s3.get_paginator("list_objects_v2").paginate(Bucket=args.bucket):
            for item in page.get("Contents", []):
                if not item["Key"].startswith(args.prefix):
                    continue
                got = s3.get_object(Bucket=args.bucket, Key=item["Key"])
                data = got["Body"].read()
                print(json.dumps({"key": item["Key"], "size": len(data), "sha256": hashlib.sha256(data).hexdigest(),
                                  "content_type": got.get("ContentType"), "etag": got.get("ETag"),
                                  "metadata": got.get("Metadata") or {}}))
    elif args.command == "uploads":
        # The multipart uploads in progress (filtered here, as for list).
        for upload in client(args.store).list_multipart_uploads(Bucket=args.bucket).get("Uploads", []):
            if upload["Key"].startswith(args.prefix):
                print(json.dumps({"key": upload["Key"], "upload_id": upload["UploadId"]}))
    elif args.command == "start-upload":
        # A multipart upload of another program's, left in progress: one part, never completed.
        s3 = client(args.store)
        upload = s3.create_multipart_upload(Bucket=args.bucket, Key=args.key)["UploadId"]
        s3.upload_part(Bucket=args.bucket, Key=args.key, UploadId=upload, PartNumber=1, Body=b"x" * 1000)
        print(json.dumps({"key": args.key, "upload_id": upload}))
    elif args.command == "get":
        data = client(args.store).get_object(Bucket=args.bucket, Key=args.key)["Body"].read()
        with open(args.out, "wb") as file:
            file.write(data)
    elif args.command == "put":
        with open(args.file, "rb") as file:
            client(args.store).put_object(Bucket=args.bucket, Key=args.key, Body=file.read())
    elif args.command == "delete":
        client(args.store).delete_object(Bucket=args.bucket, Key=args.key)


if __name__ == "__main__":
    main()
