#!/usr/bin/env bash
# A private Docker engine for the docker executor's black-box tests (tests/test_lambda_docker.py).
#
#   eval "$(scripts/docker-engine.sh start)"   # prints the exports the tests read
#   scripts/docker-engine.sh stop              # stops the engine start started (named by
#                                              # ROTO_DOCKER_ENGINE_DIR), removes its state
#
# `start` uses an engine that already answers (DOCKER_HOST, else /var/run/docker.sock) as it
# is, without touching its images. Otherwise it starts Debian's engine (installing docker.io
# with apt when it runs as root on Debian and dockerd is missing) with all its state in a
# temporary directory and a private socket: no iptables, the vfs storage driver, and a bridge
# of its own (a private name and a random 10.x subnet) where this machine lets it make one, else
# none, so it runs inside containers and CI machines alike. The bridge lets the tests take the
# path containers use where the engine does not share this host's network: reaching it by
# host.docker.internal through the bridge's gateway. Into that engine it imports the test
# images, assembled from this machine's own python3, node and shell tools (no registry is
# contacted), under the names Roto maps runtimes to by default:
#   public.ecr.aws/lambda/python:3.12    python3 with its standard library (compiled, in one
#                                        zip), boto3 in /var/runtime
#   public.ecr.aws/lambda/nodejs:20      node, with the AWS SDK for JavaScript v3 when
#                                        js/roto-testing/node_modules holds it (94 MB: the
#                                        one image over 50 MB, node's own build being 86 MB
#                                        stripped; docs/lambda.md says why that stands)
#   public.ecr.aws/lambda/provided:al2023  sh, curl and the core tools
# The python and nodejs images' /var/runtime/bootstrap runs Roto's own runtime bootstraps,
# which speak the Lambda Runtime API as the real images' runtime interface clients do.
#
# Where no engine can be had it prints ROTO_DOCKER_UNAVAILABLE (the tests skip, saying why),
# except under CI=true, where that is a failure.
set -Eeuo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"

say() { echo "docker-engine: $*" >&2; }

answers() {
  local socket="$1"
  [ -S "$socket" ] && curl -sf --max-time 2 --unix-socket "$socket" http://docker/_ping >/dev/null 2>&1
}

unavailable() {
  if [ "${CI:-}" = true ]; then
    say "$1"
    exit 1
  fi
  say "$1; the docker executor's tests will skip"
  printf "export ROTO_DOCKER_UNAVAILABLE=%q\n" "$1"
  exit 0
}

install_engine() {
  command -v dockerd >/dev/null && return 0
  if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null; then
    return 1
  fi
  say "installing Debian's docker.io"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends docker.io >&2 ||
    { apt-get update -q >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends docker.io >&2; }
}

# Copies executables and the libraries ldd names for them into the root filesystem $1.
add_programs() {
  local rootfs="$1"
  shift
  local program lib
  for program in "$@"; do
    cp -L --parents "$program" "$rootfs"
    for lib in $(ldd "$program" 2>/dev/null | grep -o '/[^ ]*' || true); do
      [ -e "$rootfs$lib" ] || cp -L --parents "$lib" "$rootfs"
    done
  done
}

# The root filesystem every test image starts from: /bin/sh and the core tools.
base_rootfs() {
  local rootfs="$1"
  mkdir -p "$rootfs"/{tmp,etc,var/task,var/runtime,opt,bin}
  chmod 1777 "$rootfs/tmp"
  add_programs "$rootfs" /bin/dash /usr/bin/env \
    $(command -v cat cut tr grep mktemp head tail sleep ls rm mkdir wc sed)
  ln -sf /bin/dash "$rootfs/bin/sh"
  echo "root:x:0:0:root:/root:/bin/sh" >"$rootfs/etc/passwd"
  echo "nobody:x:65534:65534:nobody:/:/bin/sh" >>"$rootfs/etc/passwd"
}

python_rootfs() {
  local rootfs="$1" python stdlib site
  python="$(readlink -f /usr/bin/python3)"
  stdlib="$("$python" -c 'import sysconfig; print(sysconfig.get_paths()["stdlib"])')"
  base_rootfs "$rootfs"
  add_programs "$rootfs" "$python" $(ls "$stdlib"/lib-dynload/*.so | grep -Ev '/(_test|_xx|xx|_curses|_dbm|_ctypes_test|_sqlite3|audioop|readline|nis|ossaudiodev)')
  mkdir -p "$rootfs/var/lang/bin"
  ln -sf "$python" "$rootfs/var/lang/bin/python3"
  # The standard library as compiled modules in the one zip file Python looks in first
  # (<prefix>/lib/pythonXY.zip): 500 fewer files than the library's directory, and vfs's copy
  # for each container costs by file.
  "$python" - "$stdlib" "$rootfs" <<'PY'
import os, sys, zipfile
stdlib, rootfs = sys.argv[1:]
skip = {"test", "tests", "idlelib", "tkinter", "turtledemo", "ensurepip", "lib2to3", "pydoc_data",
        "distutils", "sqlite3", "lib-dynload", "site-packages", "dist-packages", "__pycache__"}
archive = os.path.join(rootfs + sys.prefix, "lib", "python%d%d.zip" % sys.version_info[:2])
os.makedirs(os.path.dirname(archive), exist_ok=True)
with zipfile.PyZipFile(archive, "w", optimize=0) as z:
    for name in sorted(os.listdir(stdlib)):
        path = os.path.join(stdlib, name)
        if name in skip or name.startswith("config-"):
            continue
        if os.path.exists(os.path.join(path, "__init__.py")):
            z.writepy(path, filterfunc=lambda p: os.path.basename(p) not in skip)
        elif name.endswith(".py"):
            z.writepy(path)
PY
  site="$("$ROOT/.venv/bin/python" -c 'import boto3, os; print(os.path.dirname(os.path.dirname(boto3.__file__)))' 2>/dev/null || true)"
  if [ -n "$site" ]; then
    local package
    for package in boto3 botocore s3transfer jmespath dateutil urllib3 six.py; do
      [ -e "$site/$package" ] && cp -r "$site/$package" "$rootfs/var/runtime/"
    done
    find "$rootfs/var/runtime" -name __pycache__ -prune -exec rm -rf {} +
    # botocore's models of the services Roto serves, not all of AWS's.
    local data="$rootfs/var/runtime/botocore/data" keep=" s3 sts dynamodb dynamodbstreams sqs sns lambda logs iam kms secretsmanager ssm events kinesis firehose stepfunctions cloudformation cloudwatch scheduler apigateway apigatewayv2 ecr "
    for service in "$data"/*/; do
      case "$keep" in *" $(basename "$service") "*) ;; *) rm -rf "$service" ;; esac
    done
  fi
  cp "$ROOT/crates/roto-services/src/lambda/executor/bootstrap.py" "$rootfs/var/runtime/bootstrap.py"
  local version
  version="$("$python" -c 'import sys; print("%d.%d" % sys.version_info[:2])')"
  cat >"$rootfs/var/runtime/bootstrap" <<EOF
#!/bin/sh
[ -n "\${1:-}" ] && export _HANDLER="\$1"
export PYTHONPATH="\${PYTHONPATH:+\$PYTHONPATH:}/opt/python/lib/python$version/site-packages:/opt/python:/var/runtime"
exec /var/lang/bin/python3 -u /var/runtime/bootstrap.py
EOF
  chmod 755 "$rootfs/var/runtime/bootstrap"
}

node_rootfs() {
  local rootfs="$1"
  base_rootfs "$rootfs"
  add_programs "$rootfs" "$(readlink -f "$(command -v node)")"
  mkdir -p "$rootfs/var/lang/bin"
  strip -o "$rootfs/var/lang/bin/node" "$(readlink -f "$(command -v node)")"
  rm -f "$rootfs$(readlink -f "$(command -v node)")"
  local modules="$ROOT/js/roto-testing/node_modules"
  if [ -d "$modules/@aws-sdk" ]; then
    mkdir -p "$rootfs/var/runtime/node_modules"
    tar -C "$modules" --exclude='dist-es' --exclude='dist-types' --exclude='*.map' --exclude='*.md' \
      -cf - . | tar -C "$rootfs/var/runtime/node_modules" -xf -
  fi
  cp "$ROOT/crates/roto-services/src/lambda/executor/bootstrap.js" "$rootfs/var/runtime/bootstrap.js"
  cat >"$rootfs/var/runtime/bootstrap" <<'EOF'
#!/bin/sh
[ -n "${1:-}" ] && export _HANDLER="$1"
export NODE_PATH="${NODE_PATH:+$NODE_PATH:}/opt/nodejs/node20/node_modules:/opt/nodejs/node_modules:/var/runtime/node_modules"
exec /var/lang/bin/node /var/runtime/bootstrap.js
EOF
  chmod 755 "$rootfs/var/runtime/bootstrap"
}

# Imports the root filesystem $2 as image $1, with the real images' search paths.
import_image() {
  local image="$1" rootfs="$2"
  tar -C "$rootfs" -cf - . | docker import \
    --change 'ENV PATH=/var/lang/bin:/usr/local/bin:/usr/bin:/bin:/opt/bin' \
    --change 'ENV LD_LIBRARY_PATH=/var/lang/lib:/lib64:/usr/lib64:/var/runtime:/var/runtime/lib:/var/task:/var/task/lib:/opt/lib' \
    --change 'ENV LANG=en_US.UTF-8' \
    --change 'WORKDIR /var/task' \
    --change 'ENTRYPOINT ["/var/runtime/bootstrap"]' \
    - "$image" >/dev/null
  say "$image: $(du -sm "$rootfs" | cut -f1) MB"
}

build_images() {
  local work="$1/rootfs"
  python_rootfs "$work/python"
  import_image public.ecr.aws/lambda/python:3.12 "$work/python"
  if command -v node >/dev/null; then
    node_rootfs "$work/node"
    import_image public.ecr.aws/lambda/nodejs:20 "$work/node"
  fi
  base_rootfs "$work/provided"
  add_programs "$work/provided" /usr/bin/curl
  import_image public.ecr.aws/lambda/provided:al2023 "$work/provided"
  rm -rf "$work"
}

start() {
  local socket="${DOCKER_HOST:-unix:///var/run/docker.sock}"
  if [[ "$socket" == unix://* ]] && answers "${socket#unix://}"; then
    say "using the engine at $socket as it is"
    exit 0
  fi
  install_engine || unavailable "no Docker engine answers at $socket, and docker.io cannot be installed here (needs root, apt)"
  command -v docker >/dev/null || unavailable "dockerd is installed but the docker command is not"
  local dir
  dir="$(mktemp -d "${TMPDIR:-/tmp}/roto-docker.XXXXXX")"
  trap 'stop_engine "$dir"' ERR
  local bridge
  bridge="$(make_bridge "$dir")"
  nice -n 10 dockerd --iptables=false --ip6tables=false --bridge="$bridge" --storage-driver=vfs \
    --data-root "$dir/data" --exec-root "$dir/exec" --pidfile "$dir/dockerd.pid" \
    -H "unix://$dir/docker.sock" >"$dir/dockerd.log" 2>&1 &
  local tries=0
  until answers "$dir/docker.sock"; do
    tries=$((tries + 1))
    if [ "$tries" -gt 120 ] || ! kill -0 $! 2>/dev/null; then
      tail -20 "$dir/dockerd.log" >&2 || true
      stop_engine "$dir"
      unavailable "dockerd did not start (its log is above)"
    fi
    sleep 0.25
  done
  export DOCKER_HOST="unix://$dir/docker.sock"
  local started=$SECONDS
  build_images "$dir"
  trap - ERR
  say "engine at $DOCKER_HOST; images built in $((SECONDS - started)) s"
  printf "export DOCKER_HOST=%q ROTO_DOCKER_ENGINE_DIR=%q\n" "$DOCKER_HOST" "$dir"
}

# Makes a bridge for the engine and prints its name, or prints none where it cannot (no `ip`,
# no right to make links). Its name is kept in $1/bridge for stop.
make_bridge() {
  local dir="$1" name="roto$(printf '%06x' $((RANDOM * 32768 + RANDOM)))"
  local subnet="10.$((RANDOM % 200 + 20)).$((RANDOM % 250 + 1))"
  if command -v ip >/dev/null && ip link add "$name" type bridge 2>/dev/null; then
    if ip addr add "$subnet.1/24" dev "$name" && ip link set "$name" up; then
      echo "$name" >"$dir/bridge"
      echo "$name"
      return
    fi
    ip link del "$name" 2>/dev/null || true
  fi
  echo none
}

stop_engine() {
  local dir="$1" pid
  pid="$(cat "$dir/dockerd.pid" 2>/dev/null || true)"
  if [ -n "$pid" ] && kill "$pid" 2>/dev/null; then
    for _ in $(seq 1 60); do
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.25
    done
  fi
  grep -o " $dir/[^ ]*" /proc/mounts | sort -r | xargs -r -n1 umount -l 2>/dev/null || true
  if [ -f "$dir/bridge" ]; then
    ip link del "$(cat "$dir/bridge")" 2>/dev/null || true
  fi
  rm -rf "$dir"
}

stop() {
  local dir="${ROTO_DOCKER_ENGINE_DIR:-}"
  [ -n "$dir" ] && [ -d "$dir" ] && stop_engine "$dir"
  return 0
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  *) echo "usage: $0 start|stop" >&2; exit 2 ;;
esac
