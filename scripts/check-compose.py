#!/usr/bin/env python3
"""Validates docker-compose.yml and the Dockerfile's command as far as can be
done without a Docker engine:

- the file is YAML with services;
- every image is pinned to a version (the project's own image, built by a
  service of the file, excepted);
- every service has a health check, and `depends_on` names services that
  exist (with a health check where it waits for `service_healthy`);
- Kafka's CLUSTER_ID is a canonical cluster id: 16 bytes in URL-safe base64
  without padding (22 characters), as `kafka-storage.sh random-uuid` prints;
- every Socialite service's command names a binary of the project, and the
  flags and SOCIALITE_* variables it is given are ones that binary accepts
  (read from its `--help`); its health check probes the port it listens on;
- local paths mounted into containers exist;
- all of the above with docker-compose.tls.yml laid over the file, where
  the Socialite services must reach MongoDB and Kafka through TLS.

Usage: check-compose.py BIN_DIR (where the built binaries are). Needs PyYAML.
Exits 1 listing every problem found."""

import base64
import re
import shlex
import subprocess
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
BINARIES = {"socialite", "socialite-producer", "socialite-fanout-worker", "socialite-timeline-api"}
PORT_SETTINGS = ("SOCIALITE_REST_ADDR", "SOCIALITE_OPS_ADDR")


def help_text(bin_dir, argv):
    """The --help of a binary (and subcommand), flags and env names."""
    out = subprocess.run([str(bin_dir / argv[0]), *argv[1:], "--help"],
                         capture_output=True, text=True, check=True).stdout
    flags = set(re.findall(r"(--[a-z][a-z0-9-]*)", out))
    envs = set(re.findall(r"\[env: ([A-Z0-9_]+)[=\]]", out))
    return flags, envs


def canonical_cluster_id(value):
    if not re.fullmatch(r"[A-Za-z0-9_-]{22}", value):
        return False
    raw = base64.urlsafe_b64decode(value + "==")
    return len(raw) == 16 and base64.urlsafe_b64encode(raw).decode().rstrip("=") == value


def check_command(bin_dir, where, command, environment, problems):
    binary = command[0]
    if binary not in BINARIES:
        problems.append(f"{where}: command {binary!r} is not a Socialite binary")
        return
    argv = [binary] + [a for a in command[1:2] if not a.startswith("-")]
    flags, envs = help_text(bin_dir, argv)
    for arg in command[len(argv):]:
        if arg.startswith("--") and arg.split("=", 1)[0] not in flags:
            problems.append(f"{where}: {' '.join(argv)} does not accept {arg}")
    for name in environment:
        if name.startswith("SOCIALITE_") and name not in envs:
            problems.append(f"{where}: {' '.join(argv)} does not read {name}")


def merged(base, override):
    """`override` laid over `base` as `docker compose -f base -f override`
    does: maps merge key by key, anything else is replaced."""
    if isinstance(base, dict) and isinstance(override, dict):
        out = dict(base)
        for key, value in override.items():
            out[key] = merged(base.get(key), value) if key in base else value
        return out
    return override


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    bin_dir = Path(sys.argv[1])
    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    services = compose.get("services") or {}
    problems = []
    if not services:
        problems.append("docker-compose.yml has no services")
    check_services(bin_dir, "", services, problems)
    # The same stack with TLS on.
    tls = yaml.safe_load((ROOT / "docker-compose.tls.yml").read_text())
    for name in tls.get("services") or {}:
        if name not in services:
            problems.append(f"docker-compose.tls.yml: service {name} is not in docker-compose.yml")
    with_tls = merged(services, tls.get("services") or {})
    check_services(bin_dir, "with docker-compose.tls.yml: ", with_tls, problems)
    for name in ("producer", "fanout-worker", "timeline-api"):
        env = with_tls[name].get("environment") or {}
        for setting, option in (("SOCIALITE_STORE", "tls=true"), ("SOCIALITE_EVENT_LOG", "tls_ca_file=")):
            if option not in str(env.get(setting, "")):
                problems.append(f"docker-compose.tls.yml: {name}'s {setting} does not turn TLS on")
    # The image's default command, from the Dockerfile.
    dockerfile = (ROOT / "Dockerfile").read_text()
    cmd = re.search(r"^CMD (\[.*\])", dockerfile, re.M)
    if cmd:
        check_command(bin_dir, "Dockerfile CMD", yaml.safe_load(cmd.group(1)), {}, problems)
    else:
        problems.append("Dockerfile: no CMD")
    for p in problems:
        print(p)
    if problems:
        sys.exit(1)
    print(f"docker-compose.yml ok: {len(services)} services, images pinned, health checks, "
          "a canonical Kafka cluster id, commands and settings the binaries accept; "
          "the same with docker-compose.tls.yml, whose services turn TLS on")


def check_services(bin_dir, prefix, services, problems):
    built = {s.get("image") for s in services.values() if "build" in s}
    for name, svc in services.items():
        where = f"{prefix}service {name}"
        image = svc.get("image", "")
        tag = image.rsplit(":", 1)[1] if ":" in image.rsplit("/", 1)[-1] else ""
        if image not in built and (not tag or tag == "latest"):
            problems.append(f"{where}: image {image!r} is not pinned to a version")
        if not (svc.get("healthcheck") or {}).get("test"):
            problems.append(f"{where}: no health check")
        deps = svc.get("depends_on") or {}
        for dep in deps:
            if dep not in services:
                problems.append(f"{where}: depends on unknown service {dep}")
            elif isinstance(deps, dict) and (deps[dep] or {}).get("condition") == "service_healthy" \
                    and not services[dep].get("healthcheck"):
                problems.append(f"{where}: waits for {dep} to be healthy, which has no health check")
        env = svc.get("environment") or {}
        if "CLUSTER_ID" in env and not canonical_cluster_id(str(env["CLUSTER_ID"])):
            problems.append(f"{where}: CLUSTER_ID {env['CLUSTER_ID']!r} is not a canonical "
                            "Kafka cluster id (16 bytes, URL-safe base64, 22 characters)")
        command = svc.get("command")
        if isinstance(command, str):
            command = shlex.split(command)
        if command and command[0].startswith("socialite"):
            check_command(bin_dir, where, command, env, problems)
            port = next((str(env[k]).rsplit(":", 1)[1] for k in PORT_SETTINGS if k in env), None)
            probe = " ".join(map(str, (svc.get("healthcheck") or {}).get("test", [])))
            if port and f":{port}/" not in probe:
                problems.append(f"{where}: health check {probe!r} does not probe port {port}")
        for volume in svc.get("volumes") or []:
            source = str(volume).split(":", 1)[0]
            if source.startswith(("./", "../")) and not (ROOT / source).exists():
                problems.append(f"{where}: mounts {source}, which does not exist")


if __name__ == "__main__":
    main()
