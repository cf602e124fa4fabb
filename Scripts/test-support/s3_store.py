#!/usr/bin/env python3
"""A real S3-compatible store on loopback for the object-storage tests, and a reader for it.

Runs in the tests' venv (.venv-tests: moto[server] and boto3, from Scripts/install-deps).

    s3_store.py serve --bucket NAME [--also NAME[@REGION] ...] [--no-auth] [--tls-cert PEM --tls-key PEM] --log FILE --faults FILE
        Starts moto's S3 server, and in front of it a proxy that logs every request and can
        fail some. Prints one JSON line on stdout and serves until stdin closes:
          {"endpoint": "http://127.0.0.1:PORT", "store": "http://127.0.0.1:PORT2",
           "access_key": "...", "secret_key": "...", "bucket": "NAME"}
        "endpoint" is the proxy (what imgfetch is given; https with --tls-cert), "store" is moto itself.
        The proxy checks every request's signature as AWS documents it (SigV4, S3's canonical
        URI: the path decoded, then encoded once) and the body against x-amz-content-sha256, and
        answers 403 SignatureDoesNotMatch or 400 XAmzContentSHA256Mismatch itself. With auth
        (the default), moto checks the signature too, against an IAM user the script creates,
        whose key is printed; --no-auth turns moto's check off (it, and boto3's requests to it,
        fail on keys with '=', '+' or non-ASCII characters, which AWS accepts).
        --log FILE gets one JSON line per request, once answered:
          {"method": "PUT", "key": "prefix/a.jpg", "status": 200, "bytes": 1234, "query": ""}
        --faults FILE, read at each request, is JSON (or absent):
          {"status": 503, "rules": [{"method": "PUT", "suffix": ".tar", "times": 2, "query": "uploadId"}]}
        A rule fails its first `times` matching requests (-1: every one) with `status` (counted
        afresh whenever the file changes),
        without passing them on; "query", if given, must be in the request's query string.
        A rule may give its own "status", "body" (sent instead of a SlowDown error),
        "headers" (an object of extra response headers) and "delay" (seconds to wait first).

    s3_store.py list  --store URL --bucket NAME [--prefix P]   -> JSON lines {key, size, sha256, content_type, etag}
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
    S3; None when both are right. `headers` maps lowercase names to values."""
    match = AUTHORIZATION.match(headers.get("authorization", ""))
    if not match:
        return 403, "SignatureDoesNotMatch", "no AWS4-HMAC-SHA256 Authorization header"
    key_id, day, region, service, signed, signature = match.groups()
    if key_id not in secrets:
        return 403, "InvalidAccessKeyId", f"unknown key {key_id}"
    payload = headers.get("x-amz-content-sha256", "")
    if payload != "UNSIGNED-PAYLOAD" and payload != hashlib.sha256(body).hexdigest():
        return 400, "XAmzContentSHA256Mismatch", "the body's SHA-256 is not x-amz-content-sha256"
    parts = urllib.parse.urlsplit(target)
    uri = urllib.parse.quote(urllib.parse.unquote(parts.path), safe="/~")
    pairs = [pair.partition("=") for pair in parts.query.split("&") if pair]
    query = "&".join(sorted(f"{urllib.parse.quote(urllib.parse.unquote(k), safe='-_.~')}="
                            f"{urllib.parse.quote(urllib.parse.unquote(v), safe='-_.~')}" for k, _, v in pairs))
    names = signed.split(";")
    if "host" not in names or any(name not in headers for name in names):
        return 403, "SignatureDoesNotMatch", f"signed headers {signed} are not all sent"
    canonical_headers = "".join(f"{name}:{' '.join(headers[name].split())}\n" for name in names)
    request = "\n".join([method, uri, query, canonical_headers, signed, payload])
    scope = f"{day}/{region}/{service}/aws4_request"
    to_sign = "\n".join(["AWS4-HMAC-SHA256", headers.get("x-amz-date", ""), scope,
                         hashlib.sha256(request.encode()).hexdigest()])
    key = ("AWS4" + secrets[key_id]).encode()
    for part in (day, region, service, "aws4_request"):
        key = hmac.new(key, part.encode(), hashlib.sha256).digest()
    if not hmac.compare_digest(hmac.new(key, to_sign.encode(), hashlib.sha256).hexdigest(), signature):
        return 403, "SignatureDoesNotMatch", "the signature is not the canonical request's"
    return None


def client(store):
    import boto3
    return boto3.client("s3", endpoint_url=store, region_name="us-east-1",
                        aws_access_key_id=os.environ.get("AWS_ACCESS_KEY_ID", "test"),
                        aws_secret_access_key=os.environ.get("AWS_SECRET_ACCESS_KEY", "test"))


def serve(args):
    if not args.no_auth:
        # Every request after the first three (the IAM user, its key and its policy) is checked.
        os.environ["INITIAL_NO_AUTH_ACTION_COUNT"] = "3"
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
            {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "s3:*", "Resource": "*"}]}))
        access_key, secret_key = key["AccessKeyId"], key["SecretAccessKey"]
    boto3.client("s3", endpoint_url=store, region_name="us-east-1", aws_access_key_id=access_key,
                 aws_secret_access_key=secret_key).create_bucket(Bucket=args.bucket)
    for extra in args.also:
        # NAME@REGION: a bucket in another region than us-east-1, as AWS makes one.
        name, _, region = extra.partition("@")
        region = region or "us-east-1"
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
                return rule.get("status", faults.get("status", 503)), rule.get("body"), rule.get("headers", {})
        return None

    def log(method, key, status, size, query):
        with lock, open(args.log, "a") as out:
            out.write(json.dumps({"method": method, "key": key, "status": status, "bytes": size, "query": query}) + "\n")

    class Proxy(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *_):
            pass

        def relay(self):
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else b""
            path = urllib.parse.urlsplit(self.path).path
            key = urllib.parse.unquote(path.split("/", 2)[2]) if path.count("/") >= 2 else ""
            injected = fault(self.command, key, urllib.parse.urlsplit(self.path).query)
            headers = {name.lower(): value for name, value in self.headers.items()}
            refusal = signature_problem(self.command, self.path, headers, body, {access_key: secret_key})
            if refusal or injected:
                status, code, message = refusal or (injected[0], "SlowDown", f"injected {injected[0]}")
                payload = f"<?xml version=\"1.0\"?><Error><Code>{code}</Code><Message>{message}</Message></Error>".encode()
                extra = {}
                if not refusal and injected[1] is not None:
                    payload = injected[1].encode()
                if not refusal:
                    extra = injected[2]
                log(self.command, key, status, len(body), urllib.parse.urlsplit(self.path).query)
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
                upstream.request(self.command, self.path, body=body if self.command in ("PUT", "POST") else None,
                                 headers=headers)
                response = upstream.getresponse()
                payload = response.read()
                status = response.status
                # Logged before the client has its answer: a test that reads the log once
                # imgfetch is done finds every request in it.
                log(self.command, key, status, len(body), urllib.parse.urlsplit(self.path).query)
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
    print(json.dumps({"endpoint": f"{scheme}://127.0.0.1:{proxy.server_address[1]}", "store": store,
                      "access_key": access_key, "secret_key": secret_key, "bucket": args.bucket}), flush=True)
    sys.stdin.read()
    proxy.shutdown()
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
    for name in ("list", "get", "put", "delete"):
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
                                  "content_type": got.get("ContentType"), "etag": got.get("ETag")}))
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
