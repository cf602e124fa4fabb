#!/usr/bin/env python3
"""Runs the workers of deploy/k8s/indexed-job.yaml and deploy/slurm/fetch.sbatch exactly as
Kubernetes and Slurm would, on one machine, and checks that every URL of the shared list is
fetched exactly once across the shards and reported exactly once.

    .venv-tests/bin/python Scripts/test-support/check_deploy.py --imgfetch BINARY [--image IMAGE]

BINARY is the packaged one (Scripts/package; the tests run this under Scripts/test-support/without-toolchain,
as on a machine without Swift), IMAGE the container image `Scripts/package --image` built.

Kubernetes: for K = 0..completions-1, the container's command and args with `$(VAR)` expanded,
in an environment of only the container's `env` and JOB_COMPLETION_INDEX=K (as the Job controller
sets it), the volumes mounted at their paths. With --image, each pod is a podman container of
IMAGE, as the pod's securityContext says (its user and group; fsGroup owns the output volume);
the manifest must name that image. Without it, the container's command runs BINARY directly, the
mount paths mapped to local directories. Slurm: the script run by bash for
each task of `#SBATCH --array`, with the SLURM_ARRAY_* variables Slurm sets and imgfetch on PATH.
A local HTTP server serves the images and counts the requests. Needs PyYAML (in .venv-tests).

Then the failure paths, with BINARY: the Job controller's handling of each index, as the
manifest's backoffLimitPerIndex and podFailurePolicy say, for a pod stopped mid-run by SIGTERM
(imgfetch exits 75: retried, and the retry completes the shard), a pod killed by SIGKILL (137:
retried), and a pod whose list is missing (exit 2: the index fails at once, not retried); and the
Slurm script's own retry of 75 (a task stopped mid-run tries again and completes) and its exit
on 2 (no retry).
"""
import argparse
import http.server
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import signal
import threading
import time
from collections import Counter

import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
URLS = 60


class Images(http.server.ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, body: bytes):
        self.body, self.requests, self.lock = body, Counter(), threading.Lock()
        self.delay = 0  # seconds before each answer: a worker to be stopped mid-run is still fetching
        super().__init__(("127.0.0.1", 0), Handler)


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_GET(self):
        with self.server.lock:
            self.server.requests[self.path] += 1
        time.sleep(self.server.delay)
        self.send_response(200)
        self.send_header("Content-Type", "image/jpeg")
        self.send_header("Content-Length", str(len(self.server.body)))
        self.end_headers()
        try:
            self.wfile.write(self.server.body)
        except (BrokenPipeError, ConnectionResetError):
            pass  # a worker stopped mid-run

    def log_message(self, *args):
        pass


def check(label, server, urls, outputs, failures):
    """Every URL requested once and saved by exactly one worker; returns the problems."""
    problems = []
    paths = {u.split("/", 3)[3] for u in urls}
    requested = Counter({p.lstrip("/"): n for p, n in server.requests.items()})
    if set(requested) != paths or any(n != 1 for n in requested.values()):
        extra = {p: n for p, n in requested.items() if n != 1}
        problems.append(f"{label}: {len(requested)} of {len(paths)} URLs requested, repeated: {extra}")
    saved = Counter()
    for out in outputs:
        for name in os.listdir(out) if os.path.isdir(out) else []:
            if name.endswith(".jpg"):
                saved[name] += 1
    if len(saved) != len(urls) or any(n != 1 for n in saved.values()):
        problems.append(f"{label}: {sum(saved.values())} files for {len(urls)} URLs")
    problems += [f"{label}: {f}" for f in failures]
    return problems


def run_kubernetes(imgfetch, image, list_path, scratch, server, urls):
    with open(os.path.join(ROOT, "deploy/k8s/indexed-job.yaml")) as f:
        job = yaml.safe_load(f)
    spec = job["spec"]
    assert spec["completionMode"] == "Indexed"
    pod = spec["template"]["spec"]
    container = pod["containers"][0]
    count = spec["completions"]
    mounts = {m["name"]: m["mountPath"] for m in container["volumeMounts"]}
    local = {mounts["list"]: os.path.dirname(list_path), mounts["out"]: os.path.join(scratch, "k8s")}
    os.makedirs(local[mounts["out"]])
    failures, outputs = [], []
    if image:
        named = container["image"]
        if named.rsplit(":", 1)[0] != image.rsplit(":", 1)[0] or \
                named.rsplit(":", 1)[-1] != image.rsplit(":", 1)[-1].removesuffix("-dirty"):
            failures.append(f"the manifest runs {named}, not the image Scripts/package built ({image})")
        security = pod.get("securityContext", {})
        user, group = security.get("runAsUser"), security.get("runAsGroup")
        if not security.get("runAsNonRoot") or not user:
            failures.append("the pod does not run as a non-root user (securityContext)")
        # What fsGroup does to a volume: the group owns it and may write it.
        if security.get("fsGroup") is not None:
            os.chown(local[mounts["out"]], -1, security["fsGroup"])
            os.chmod(local[mounts["out"]], 0o2775)
    for index in range(count):
        env = {e["name"]: e["value"] for e in container.get("env", [])}
        env["JOB_COMPLETION_INDEX"] = str(index)
        if env.get("IMGFETCH_SHARD_COUNT") != str(count):
            failures.append(f"IMGFETCH_SHARD_COUNT {env.get('IMGFETCH_SHARD_COUNT')} is not completions {count}")

        def expand(text):
            text = re.sub(r"\$\((\w+)\)", lambda m: env.get(m.group(1), m.group(0)), text)
            for mount, path in local.items():
                if text == mount or text.startswith(mount + "/"):
                    text = path + text[len(mount):]
            return text

        if image:
            def variables(text):
                return re.sub(r"\$\((\w+)\)", lambda m: env.get(m.group(1), m.group(0)), text)
            argv = ["podman", "run", "--rm", "--network", "host", "--user", f"{user}:{group or user}",
                    "--entrypoint", json.dumps(container["command"])]
            argv += [a for name, value in env.items() for a in ("--env", f"{name}={value}")]
            argv += ["--volume", f"{local[mounts['list']]}:{mounts['list']}:ro", "--volume", f"{local[mounts['out']]}:{mounts['out']}"]
            argv += [image] + [variables(a) for a in container.get("args", [])]
            done = subprocess.run(argv, capture_output=True, text=True)
        else:
            argv = [expand(a) for a in container["command"] + container.get("args", [])]
            argv[0] = imgfetch if argv[0] == "imgfetch" else argv[0]
            done = subprocess.run(argv, env=env, capture_output=True, text=True)
        if done.returncode != 0:
            failures.append(f"pod {index} exited {done.returncode}: {done.stderr.strip()[-300:]}")
        outputs.append(expand(f"{mounts['out']}/part-{index}"))
    return check("kubernetes", server, urls, outputs, failures)


def run_slurm(imgfetch, image, list_path, scratch, server, urls):
    script = os.path.join(ROOT, "deploy/slurm/fetch.sbatch")
    with open(script) as f:
        text = f.read()
    match = re.search(r"^#SBATCH --array=(\d+)-(\d+)(?::(\d+))?$", text, re.M)
    first, last, step = int(match.group(1)), int(match.group(2)), int(match.group(3) or 1)
    tasks = list(range(first, last + 1, step))
    out = os.path.join(scratch, "slurm")
    os.makedirs(out)
    bin_dir = os.path.join(scratch, "bin")
    os.makedirs(bin_dir)
    os.symlink(os.path.abspath(imgfetch), os.path.join(bin_dir, "imgfetch"))
    failures, outputs = [], []
    for task in tasks:
        env = {"PATH": f"{bin_dir}:/usr/bin:/bin", "LIST": list_path, "OUT": out,
               "SLURM_ARRAY_JOB_ID": "1000", "SLURM_JOB_ID": str(1001 + task), "SLURM_ARRAY_TASK_ID": str(task),
               "SLURM_ARRAY_TASK_MIN": str(first), "SLURM_ARRAY_TASK_MAX": str(tasks[-1]),
               "SLURM_ARRAY_TASK_COUNT": str(len(tasks)), "SLURM_ARRAY_TASK_STEP": str(step)}
        done = subprocess.run(["bash", script], env=env, capture_output=True, text=True, cwd=scratch)
        if done.returncode != 0:
            failures.append(f"task {task} exited {done.returncode}: {done.stderr.strip()[-300:]}")
        outputs.append(os.path.join(out, f"part-{task}"))
    return check("slurm", server, urls, outputs, failures)


def failure_action(rules, container, code):
    """What a podFailurePolicy does with a pod that exited `code`: FailIndex, FailJob, Ignore, or
    Count (counted against backoffLimitPerIndex), as the Job controller reads the rules in order."""
    for rule in rules:
        exits = rule.get("onExitCodes")
        if not exits or exits.get("containerName", container) != container:
            continue
        if (code in exits["values"]) == (exits["operator"] == "In"):
            return rule["action"]
    return "Count"


def run_index(spec, container, start_pod):
    """One index of an Indexed Job, as the controller runs it: pods until one succeeds, the policy
    fails the index, or its failures pass backoffLimitPerIndex. Returns the outcome and exit codes."""
    limit = spec.get("backoffLimitPerIndex", 0)
    rules = spec.get("podFailurePolicy", {}).get("rules", [])
    codes, counted = [], 0
    while True:
        code = start_pod(len(codes))
        codes.append(code)
        if code == 0:
            return "Succeeded", codes
        action = failure_action(rules, container["name"], code)
        if action in ("FailIndex", "FailJob"):
            return "Failed", codes
        counted += action != "Ignore"
        if counted > limit:
            return "Failed", codes


def stopped(argv, env, server, how, cwd=None, target=None):
    """Runs argv while the server answers slowly and sends `how` to the imgfetch process (argv's
    own, or the one whose arguments contain `target`) once it is fetching; the exit code as a
    container runtime gives it (128 + signal for a signal's end)."""
    server.delay = 2
    try:
        process = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, cwd=cwd)
        deadline = time.monotonic() + 20
        while not server.requests and time.monotonic() < deadline:
            time.sleep(0.05)
        pid = process.pid
        if target:
            pid = next((int(p) for p, line in ((p, _cmdline(p)) for p in os.listdir("/proc") if p.isdigit())
                        if target.encode() in line and b"imgfetch" in line.split(b"\0")[0]), process.pid)
        os.kill(pid, how)
        server.delay = 0
        _, err = process.communicate(timeout=120)
    finally:
        server.delay = 0
    code = process.returncode
    return (128 - code if code < 0 else code), err


def _cmdline(pid):
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read()
    except OSError:  # gone meanwhile
        return b""


def run_kubernetes_failures(imgfetch, list_path, scratch, server, urls):
    with open(os.path.join(ROOT, "deploy/k8s/indexed-job.yaml")) as f:
        job = yaml.safe_load(f)
    spec = job["spec"]
    container = spec["template"]["spec"]["containers"][0]
    mounts = {m["name"]: m["mountPath"] for m in container["volumeMounts"]}
    out = os.path.join(scratch, "k8s-failures")
    os.makedirs(out)
    nowhere = os.path.join(scratch, "no-list")
    os.makedirs(nowhere)
    # Index 0 is stopped (SIGTERM) in its first pod, index 1 killed (SIGKILL), index 2 has no list.
    faults = {(0, 0): signal.SIGTERM, (1, 0): signal.SIGKILL}
    expected = {0: ("Succeeded", [75, 0]), 1: ("Succeeded", [137, 0]), 2: ("Failed", [2]), 3: ("Succeeded", [0])}
    failures, outputs = [], []
    for index in range(spec["completions"]):
        env = {e["name"]: e["value"] for e in container.get("env", [])}
        env["JOB_COMPLETION_INDEX"] = str(index)
        local = {mounts["list"]: nowhere if index == 2 else os.path.dirname(list_path), mounts["out"]: out}

        def expand(text):
            text = re.sub(r"\$\((\w+)\)", lambda m: env.get(m.group(1), m.group(0)), text)
            for mount, path in local.items():
                if text == mount or text.startswith(mount + "/"):
                    text = path + text[len(mount):]
            return text

        argv = [expand(a) for a in container["command"] + container.get("args", [])]
        argv[0] = imgfetch if argv[0] == "imgfetch" else argv[0]

        def start_pod(attempt):
            if (index, attempt) in faults:
                server.requests.clear()
                return stopped(argv, env, server, faults[(index, attempt)])[0]
            return subprocess.run(argv, env=env, capture_output=True).returncode

        outcome = run_index(spec, container, start_pod)
        if outcome != expected[index]:
            failures.append(f"index {index}: {outcome[0]} after exits {outcome[1]}, expected {expected[index][0]} after {expected[index][1]}")
        outputs.append(os.path.join(out, f"part-{index}"))
    if os.path.isdir(outputs[2]) and any(name.endswith(".jpg") for name in os.listdir(outputs[2])):
        failures.append("index 2 wrote files without its list")
    # The list put back, index 2 runs again (as `kubectl` would after a fix): every URL is saved once.
    server.requests.clear()
    env = {e["name"]: e["value"] for e in container.get("env", [])}
    env["JOB_COMPLETION_INDEX"] = "2"
    argv = [a.replace("$(JOB_COMPLETION_INDEX)", "2") for a in container["command"] + container.get("args", [])]
    argv = [os.path.dirname(list_path) + a[len(mounts["list"]):] if a.startswith(mounts["list"] + "/") else
            out + a[len(mounts["out"]):] if a.startswith(mounts["out"] + "/") else a for a in argv]
    argv[0] = imgfetch if argv[0] == "imgfetch" else argv[0]
    if subprocess.run(argv, env=env, capture_output=True).returncode != 0:
        failures.append("index 2 did not succeed once its list was there")
    saved = Counter(name for part in outputs if os.path.isdir(part) for name in os.listdir(part) if name.endswith(".jpg"))
    if len(saved) != len(urls) or any(n != 1 for n in saved.values()):
        failures.append(f"{sum(saved.values())} files for {len(urls)} URLs after the retries")
    return [f"kubernetes failures: {f}" for f in failures]


def run_slurm_failures(imgfetch, list_path, scratch, server, urls):
    script = os.path.join(ROOT, "deploy/slurm/fetch.sbatch")
    out = os.path.join(scratch, "slurm-failures")
    os.makedirs(out)
    bin_dir = os.path.join(scratch, "bin-failures")
    os.makedirs(bin_dir)
    os.symlink(os.path.abspath(imgfetch), os.path.join(bin_dir, "imgfetch"))
    failures = []

    def environment(task, listed):
        return {"PATH": f"{bin_dir}:/usr/bin:/bin", "LIST": listed, "OUT": out, "SLURM_ARRAY_JOB_ID": "2000",
                "SLURM_JOB_ID": str(2001 + task), "SLURM_ARRAY_TASK_ID": str(task)}
    # Task 0's imgfetch is stopped mid-run (75): the script tries again, and the task completes.
    code, err = stopped(["bash", script], environment(0, list_path), server, signal.SIGTERM, cwd=scratch,
                        target=f"{out}/part-0")
    if code != 0 or "attempt 1 of task 0 exited 75; trying again" not in err:
        failures.append(f"task 0, stopped mid-run: exit {code}, stderr {err.strip()[-300:]}")
    if not any(name.endswith(".jpg") for name in os.listdir(f"{out}/part-0")):
        failures.append("task 0's retry saved nothing")
    # Task 1 without its list: a usage error, which the script does not retry.
    done = subprocess.run(["bash", script], env=environment(1, os.path.join(scratch, "missing.txt")),
                          capture_output=True, text=True, cwd=scratch)
    if done.returncode != 2 or "trying again" in done.stderr:
        failures.append(f"task 1, no list: exit {done.returncode}, stderr {done.stderr.strip()[-300:]}")
    return [f"slurm failures: {f}" for f in failures]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--imgfetch", required=True)
    parser.add_argument("--image", help="the container image to run the Kubernetes pods in (podman)")
    args = parser.parse_args()
    scratch = tempfile.mkdtemp(prefix="imgfetch-deploy-")
    try:
        samples = os.path.join(scratch, "samples")
        os.makedirs(samples)
        subprocess.run([sys.executable, os.path.join(ROOT, "Scripts/test-support/make_samples.py"), samples, "--count", "1"],
                       check=True, capture_output=True)
        body = open(os.path.join(samples, sorted(n for n in os.listdir(samples) if n.endswith(".jpg"))[0]), "rb").read()
        problems = []
        for runner in (run_kubernetes, run_slurm):
            server = Images(body)
            threading.Thread(target=server.serve_forever, daemon=True).start()
            base = f"http://127.0.0.1:{server.server_address[1]}"
            urls = [f"{base}/{runner.__name__}/image-{i:03d}.jpg" for i in range(URLS)]
            data = os.path.join(scratch, runner.__name__, "data")
            os.makedirs(data)
            list_path = os.path.join(data, "urls.txt")
            with open(list_path, "w") as f:
                f.write("\n".join(urls) + "\n")
            problems += runner(os.path.abspath(args.imgfetch), args.image, list_path, os.path.join(scratch, runner.__name__), server, urls)
            server.requests.clear()
            failing = run_kubernetes_failures if runner is run_kubernetes else run_slurm_failures
            problems += failing(os.path.abspath(args.imgfetch), list_path, os.path.join(scratch, runner.__name__), server, urls)
            server.shutdown()
        for problem in problems:
            print(f"check-deploy: {problem}", file=sys.stderr)
        pods = f" (the pods in {args.image})" if args.image else ""
        print("check-deploy: " + ("FAILED" if problems else f"ok: {URLS} URLs, each fetched once, under both{pods}; "
                                  "75 and a killed pod retried, 2 not"))
        return 1 if problems else 0
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
