#!/usr/bin/env bash
# Provision a Debian bookworm machine (as root) for hal's test suite.
#
#   scripts/provision.sh            # idempotent; quiet on success
#
# Steps (each logs to $HAL_CI_LOG_DIR/<step>.log, default /tmp/hal-ci/):
#   packages        apt: docker.io, docker-compose (v1), busybox-static,
#                   docker-registry, apache2-utils (htpasswd for a registry that
#                   wants a login), debootstrap, util-linux, iproute2, curl, socat, openssl
#                   (the TLS terminator of tests/integration/tls.rs),
#                   zsh, fish, man-db (completion and manual tests), make (make install)
#   compose-plugin  Compose v2 CLI plugin from Debian trixie's docker-compose .deb
#                   -> /usr/local/lib/docker/cli-plugins/docker-compose
#   journald        a live journal: when no journal answers (probed with `systemd-cat`,
#                   as a stale /run/systemd/journal/socket is not a live journal), start
#                   /lib/systemd/systemd-journald in the background (no systemd as PID 1
#                   needed; log /var/log/hal-journald.log, pid $RUN_DIR/journald.pid,
#                   persistent storage in /var/log/journal); `journalctl` and `systemd-cat`
#                   present. Docker's `journald` log driver and hal's history tests write there.
#                   /etc/systemd/journald.conf.d/hal-ci.conf: no rate limit (every line the engine
#                   sends is kept; bench/journal.sh writes 1 M); a journald this step started is
#                   restarted when that file changes.
#   dockerd         /etc/docker/daemon.json + dockerd in the background
#   fixture         hal-fixture:latest (FROM scratch + static busybox)
#   registry        distribution on 127.0.0.1:5000; pushes 127.0.0.1:5000/hal/fixture:latest
#   podman          apt: podman (4.3), catatonit, netavark, aardvark-dns, jq; a containers.conf
#                   drop-in for a host without systemd (lower ulimits, cgroupfs, events in a
#                   file, subnet pools 10.202-203/16) and 127.0.0.1:5000 as a plain-HTTP
#                   registry; a rootful `podman system service` on unix:///run/hal-ci/podman.sock
#                   (log /var/log/hal-podman.log); the fixture loaded from docker (both names);
#                   a loop running containers' healthchecks on their interval, as systemd's
#                   timers would (log /var/log/hal-podman-healthchecks.log). dockerd is untouched:
#                   both engines run at once; DOCKER_HOST=unix:///run/hal-ci/podman.sock for Podman.
#   systemd-image   hal-systemd:bookworm (debootstrap minbase + systemd), verified once
#   cargo           cargo reachable (adds ~/.cargo/bin to PATH if needed)
#   cargo-deb       cargo-deb $CARGO_DEB_VERSION (`cargo install --locked`, only when missing)
#   install-image   hal-install:bookworm = hal-systemd:bookworm + man-db and make, the
#                   clean machine tests/integration/install.rs installs the .deb and `make install` on
#
# Nothing is printed on success. On failure: the step, the reason, and the tail
# of the step's log; exit status 1.
#
# Environment knobs:
#   HAL_CI_LOG_DIR         log directory (default /tmp/hal-ci)
#   HAL_CI_DEBIAN_MIRROR   Debian mirror (default: the machine's own apt source)
#   HAL_CI_VERBOSE=1       print one line per step with its duration
#   HAL_CI_VERIFY_SYSTEMD=1  re-run the systemd-in-container check even if the image exists
set -euo pipefail

LOG_DIR=${HAL_CI_LOG_DIR:-/tmp/hal-ci}
STATE_DIR=/var/lib/hal-ci
CONF_DIR=/etc/hal-ci
RUN_DIR=/run/hal-ci
SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

DOCKERD_LOG=/var/log/hal-dockerd.log
JOURNALD=/lib/systemd/systemd-journald
JOURNALD_LOG=/var/log/hal-journald.log
JOURNALD_PIDFILE=$RUN_DIR/journald.pid
DOCKERD_PIDFILE=/var/run/docker.pid
REGISTRY_LOG=/var/log/hal-registry.log
REGISTRY_PIDFILE=$RUN_DIR/registry.pid
REGISTRY_CONF=$CONF_DIR/registry.yml
REGISTRY_ADDR=127.0.0.1:5000

COMPOSE_PLUGIN=/usr/local/lib/docker/cli-plugins/docker-compose
FIXTURE_IMAGE=hal-fixture:latest
FIXTURE_REMOTE=$REGISTRY_ADDR/hal/fixture:latest
SYSTEMD_IMAGE=hal-systemd:bookworm
SYSTEMD_ROOTFS_IMAGE=hal-systemd:bookworm-rootfs
INSTALL_IMAGE=hal-install:bookworm
CARGO_DEB_VERSION=3.8.0

export DEBIAN_FRONTEND=noninteractive
export DOCKER_BUILDKIT=0 # no buildx here; the classic builder is enough for the fixture

if [[ $(id -u) -ne 0 ]]; then
    echo "provision: must run as root" >&2
    exit 1
fi
mkdir -p "$LOG_DIR" "$STATE_DIR" "$CONF_DIR" "$RUN_DIR"
REASON_FILE=$LOG_DIR/.reason

# ---------------------------------------------------------------- helpers

# die MESSAGE: fail the current step with a reason.
die() {
    printf '%s\n' "$*" >>"$REASON_FILE"
    printf 'ERROR: %s\n' "$*" >&2
    exit 1
}

log() { printf '[%(%H:%M:%S)T] %s\n' -1 "$*"; }

# wait_for SECONDS CMD...: poll CMD every 0.5 s until it succeeds.
wait_for() {
    local deadline=$((SECONDS + $1)); shift
    until "$@" >/dev/null 2>&1; do
        ((SECONDS < deadline)) || return 1
        sleep 0.5
    done
}

# write_if_changed PATH MODE: content on stdin; returns 0 if the file was (re)written.
write_if_changed() {
    local path=$1 mode=$2 tmp
    tmp=$(mktemp "$path.XXXXXX")
    cat >"$tmp"
    if [[ -f $path ]] && cmp -s "$tmp" "$path"; then
        rm -f "$tmp"
        return 1
    fi
    chmod "$mode" "$tmp"
    mv -f "$tmp" "$path"
    return 0
}

# Things a step wants undone when it exits (success or failure); see run_step.
CLEANUP_PATHS=()
CLEANUP_CONTAINERS=()
CLEANUP_IMAGES=()
step_cleanup() {
    local x
    for x in ${CLEANUP_CONTAINERS[@]+"${CLEANUP_CONTAINERS[@]}"}; do docker rm -f "$x" >/dev/null 2>&1 || true; done
    for x in ${CLEANUP_IMAGES[@]+"${CLEANUP_IMAGES[@]}"}; do docker rmi -f "$x" >/dev/null 2>&1 || true; done
    for x in ${CLEANUP_PATHS[@]+"${CLEANUP_PATHS[@]}"}; do rm -rf "$x"; done
}

pid_alive() { [[ -s $1 ]] && kill -0 "$(cat "$1")" 2>/dev/null; }

docker_up() { docker info >/dev/null 2>&1; }

# The machine's own Debian mirror (first non-security URI in its apt sources).
debian_mirror() {
    if [[ -n ${HAL_CI_DEBIAN_MIRROR:-} ]]; then
        echo "${HAL_CI_DEBIAN_MIRROR%/}"
        return
    fi
    local uri=""
    if [[ -f /etc/apt/sources.list.d/debian.sources ]]; then
        uri=$(awk 'tolower($1)=="uris:" { for (i = 2; i <= NF; i++) if ($i !~ /security/) { print $i; exit } }' \
            /etc/apt/sources.list.d/debian.sources)
    fi
    if [[ -z $uri && -f /etc/apt/sources.list ]]; then
        uri=$(sed -E -n 's/^[[:space:]]*deb[[:space:]]+(\[[^]]*\][[:space:]]+)?([^[:space:]]+).*/\2/p' /etc/apt/sources.list |
            grep -v security | head -n1 || true)
    fi
    uri=${uri:-http://deb.debian.org/debian}
    echo "${uri%/}"
}

# run_step NAME FUNCTION: run FUNCTION in a subshell with errexit, output to the step log.
run_step() {
    local name=$1 fn=$2 log=$LOG_DIR/$1.log t0=$SECONDS rc
    : >"$REASON_FILE"
    set +e
    (
        set -eEuo pipefail
        trap step_cleanup EXIT
        trap 'rc=$?; [[ -s $REASON_FILE ]] || printf "command failed (exit %s) at line %s: %s\n" "$rc" "$LINENO" "$BASH_COMMAND" >>"$REASON_FILE"' ERR
        log "step $name"
        "$fn"
        log "step $name done"
    ) >"$log" 2>&1 </dev/null
    rc=$?
    set -e
    local took=$((SECONDS - t0))
    printf '%s %ss rc=%s\n' "$name" "$took" "$rc" >>"$LOG_DIR/timings.txt"
    if ((rc != 0)); then
        local reason
        reason=$(head -n1 "$REASON_FILE" 2>/dev/null || true)
        {
            echo "provision: step '$name' failed after ${took}s: ${reason:-exit status $rc}"
            echo "----- last 40 lines of $log -----"
            tail -n 40 "$log"
            echo "-----"
        } >&2
        exit 1
    fi
    if [[ ${HAL_CI_VERBOSE:-0} == 1 ]]; then
        echo "provision: $name ok (${took}s)"
    fi
}

# ---------------------------------------------------------------- steps

# prometheus: promtool checks hal's metrics and example rules (tests/integration/fleet.rs);
# its daemon is never started here (policy-rc.d below).
PACKAGES=(docker.io docker-compose busybox-static docker-registry apache2-utils debootstrap
    util-linux iproute2 curl socat openssl zsh fish man-db make tmux prometheus strace)

step_packages() { install_packages "${PACKAGES[@]}"; }

# install_packages PKG...: apt-get install those not installed yet (no recommends).
install_packages() {
    local missing=() p
    for p in "$@"; do
        if [[ $(dpkg-query -W -f='${db:Status-Abbrev}' "$p" 2>/dev/null) != "ii "* ]]; then
            missing+=("$p")
        fi
    done
    if ((${#missing[@]} == 0)); then
        log "all packages present"
        return 0
    fi
    log "missing: ${missing[*]}"

    # Keep package postinsts from starting services (dockerd, the stock registry on
    # :5000) with their default config; we start our own below.
    if [[ ! -e /usr/sbin/policy-rc.d ]]; then
        CLEANUP_PATHS+=(/usr/sbin/policy-rc.d)
        printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d
        chmod 0755 /usr/sbin/policy-rc.d
    fi

    local apt=(apt-get -qq -o Dpkg::Use-Pty=0 -o DPkg::Options::=--force-confdef -o DPkg::Options::=--force-confold)
    local updated=0 need_update=0
    # Update only when needed: no lists at all, lists older than a day, or a
    # missing package without an install candidate.
    if ! compgen -G '/var/lib/apt/lists/*_Packages*' >/dev/null ||
        [[ -n $(find /var/lib/apt/lists -maxdepth 1 -name '*_InRelease' -mmin +1440 -print -quit) ]]; then
        need_update=1
    else
        for p in "${missing[@]}"; do
            if apt-cache policy "$p" 2>/dev/null | grep -q 'Candidate: (none)' ||
                [[ -z $(apt-cache policy "$p" 2>/dev/null) ]]; then
                need_update=1
            fi
        done
    fi
    if ((need_update)); then
        log "apt-get update"
        "${apt[@]}" update
        updated=1
    fi
    log "apt-get install ${missing[*]}"
    if ! "${apt[@]}" install --no-install-recommends "${missing[@]}"; then
        ((updated == 0)) || die "apt-get install ${missing[*]} failed"
        log "install failed with the current lists; apt-get update and retry"
        "${apt[@]}" update
        "${apt[@]}" install --no-install-recommends "${missing[@]}" ||
            die "apt-get install ${missing[*]} failed"
    fi
    for p in "${missing[@]}"; do
        [[ $(dpkg-query -W -f='${db:Status-Abbrev}' "$p" 2>/dev/null) == "ii "* ]] ||
            die "package $p is still not installed"
    done
}

compose_v2_ok() { "$1" version 2>/dev/null | grep -Eq 'version v?2\.'; }

step_compose_plugin() {
    if [[ -x $COMPOSE_PLUGIN ]] && compose_v2_ok "$COMPOSE_PLUGIN"; then
        log "compose plugin present: $("$COMPOSE_PLUGIN" version)"
    else
        local mirror tmp keyring=/usr/share/keyrings/debian-archive-keyring.gpg
        mirror=$(debian_mirror)
        [[ -f /usr/share/keyrings/debian-archive-trixie-stable.gpg ]] &&
            keyring=/usr/share/keyrings/debian-archive-trixie-stable.gpg
        tmp=$(mktemp -d /tmp/hal-ci-trixie.XXXXXX)
        CLEANUP_PATHS+=("$tmp")
        mkdir -p "$tmp/lists/partial" "$tmp/cache/archives/partial" "$tmp/deb"
        echo "deb [signed-by=$keyring] $mirror trixie main" >"$tmp/sources.list"
        log "fetching docker-compose from $mirror trixie (keyring $keyring)"
        # A private apt state: the machine's own sources and lists stay untouched.
        local apt_opts=(
            -o "Dir::Etc::sourcelist=$tmp/sources.list"
            -o "Dir::Etc::sourceparts=-"
            -o "Dir::State::Lists=$tmp/lists"
            -o "Dir::Cache=$tmp/cache"
            -o "Dir::Cache::pkgcache="
            -o "Dir::Cache::srcpkgcache="
            -o "APT::Sandbox::User=root"
            -o "Acquire::Check-Valid-Until=false"
            -o "Acquire::Languages=none"
        )
        apt-get -qq "${apt_opts[@]}" update || die "apt-get update against $mirror trixie failed"
        (cd "$tmp/deb" && apt-get -qq "${apt_opts[@]}" download docker-compose) ||
            die "apt-get download docker-compose (trixie) failed"
        local deb
        deb=$(ls "$tmp"/deb/docker-compose_*.deb)
        log "got $(basename "$deb")"
        dpkg-deb -x "$deb" "$tmp/x"
        local bin=$tmp/x/usr/libexec/docker/cli-plugins/docker-compose
        [[ -x $bin ]] || die "$(basename "$deb") has no usr/libexec/docker/cli-plugins/docker-compose"
        compose_v2_ok "$bin" || die "$(basename "$deb") plugin does not report version 2.x: $("$bin" version 2>&1 | head -n1)"
        install -D -m 0755 "$bin" "$COMPOSE_PLUGIN"
        log "installed $COMPOSE_PLUGIN: $("$COMPOSE_PLUGIN" version)"
    fi

    # Every docker CLI on the machine must find the plugin.
    local cli seen=""
    for cli in $(type -ap docker) /usr/local/bin/docker /usr/bin/docker; do
        [[ -e $cli ]] || continue
        cli=$(readlink -f "$cli")
        [[ -x $cli && " $seen " != *" $cli "* ]] || continue
        seen+=" $cli"
        local v
        v=$("$cli" compose version 2>&1) || die "$cli compose version failed: $v"
        grep -Eq 'version v?2\.' <<<"$v" || die "$cli compose version is not v2: $v"
        log "$cli ($("$cli" --version)): $v"
    done
    # The v1 standalone binary stays v1.
    if [[ -x /usr/bin/docker-compose ]]; then
        local v1
        v1=$(/usr/bin/docker-compose version --short 2>&1) || die "/usr/bin/docker-compose version failed: $v1"
        [[ $v1 == 1.* ]] || die "/usr/bin/docker-compose is not v1 (got $v1)"
        log "/usr/bin/docker-compose: $v1"
    fi
}

# Address pools for user-defined networks; chosen clear of this machine's routes.
DAEMON_JSON='{
  "default-address-pools": [
    { "base": "10.200.0.0/16", "size": 24 },
    { "base": "10.201.0.0/16", "size": 24 }
  ]
}'

ip4_to_int() {
    local a b c d
    IFS=. read -r a b c d <<<"$1"
    echo $(((a << 24) | (b << 16) | (c << 8) | d))
}

# check_pool_routes ENGINE POOL...: fail if a host route (not one of the engines'
# own bridges) overlaps the pools.
check_pool_routes() {
    local engine=$1 dst dev pool clash=""
    shift
    local pools=("$@")
    while read -r dst dev; do
        [[ $dst == default ]] && continue
        [[ $dev == docker0 || $dev == br-* || $dev == veth* || $dev == podman* ]] && continue
        [[ $dst == */* ]] || dst=$dst/32
        local rnet=${dst%/*} rlen=${dst#*/}
        for pool in "${pools[@]}"; do
            local pnet=${pool%/*} plen=${pool#*/}
            local len=$((rlen < plen ? rlen : plen))
            local mask=$(((0xffffffff << (32 - len)) & 0xffffffff))
            if ((($(ip4_to_int "$rnet") & mask) == ($(ip4_to_int "$pnet") & mask))); then
                clash+=" $dst(dev $dev)~$pool"
            fi
        done
    done < <(ip -4 route show | awk '{ d = ""; for (i = 1; i < NF; i++) if ($i == "dev") d = $(i + 1); print $1, d }')
    [[ -z $clash ]] || die "$engine address pools overlap host routes:$clash"
    log "address pools ${pools[*]} clear of host routes"
}

stop_dockerd() {
    pid_alive "$DOCKERD_PIDFILE" || return 0
    local pid
    pid=$(cat "$DOCKERD_PIDFILE")
    log "stopping dockerd (pid $pid)"
    kill -TERM "$pid"
    wait_for 60 bash -c "! kill -0 $pid" || die "dockerd (pid $pid) did not exit within 60s"
}

step_dockerd() {
    check_pool_routes docker 10.200.0.0/16 10.201.0.0/16
    mkdir -p /etc/docker
    local changed=0
    if printf '%s\n' "$DAEMON_JSON" | write_if_changed /etc/docker/daemon.json 0644; then
        changed=1
        log "wrote /etc/docker/daemon.json"
    fi
    # A running dockerd whose default bridge is gone (another dockerd on the machine can
    # delete docker0) fails every `docker run` on the default network: start it again,
    # which makes the bridge anew.
    local why=""
    ((changed)) && why="daemon.json changed"
    if docker_up && [[ ! -e /sys/class/net/docker0 ]] &&
        [[ $(docker network inspect bridge -f '{{index .Options "com.docker.network.bridge.name"}}' 2>/dev/null) == docker0 ]]; then
        why="its default bridge docker0 is gone"
    fi
    if [[ -n $why ]] && docker_up; then
        if pid_alive "$DOCKERD_PIDFILE"; then
            log "restarting dockerd: $why"
            stop_dockerd
        else
            die "$why but the running dockerd has no pidfile at $DOCKERD_PIDFILE; restart it by hand"
        fi
    fi

    if ! docker_up; then
        if pid_alive "$DOCKERD_PIDFILE"; then
            log "dockerd pid $(cat "$DOCKERD_PIDFILE") exists but does not answer yet; waiting"
        else
            log "starting dockerd (log $DOCKERD_LOG)"
            rm -f "$DOCKERD_PIDFILE"
            echo "=== $(date -Is) hal provision: starting dockerd" >>"$DOCKERD_LOG"
            setsid nohup dockerd --config-file /etc/docker/daemon.json \
                >>"$DOCKERD_LOG" 2>&1 </dev/null 9>&- &
        fi
        if ! wait_for 60 docker_up; then
            echo "----- tail of $DOCKERD_LOG -----"
            tail -n 40 "$DOCKERD_LOG" || true
            die "dockerd did not answer 'docker info' within 60s (see $DOCKERD_LOG)"
        fi
    fi

    local driver cgroup
    driver=$(docker info -f '{{.Driver}}')
    cgroup=$(docker info -f '{{.CgroupDriver}} cgroup v{{.CgroupVersion}}')
    log "dockerd $(docker version -f '{{.Server.Version}}') up; storage driver: $driver; $cgroup"
    [[ $driver != vfs ]] || log "WARNING: storage driver is vfs (slow, disk hungry)"
    echo "$driver" >"$STATE_DIR/storage-driver"
}

# journal_live: a journald takes a line (a socket file left by a dead one does not).
journal_live() { echo "hal provision: journal probe" | systemd-cat -t hal-provision >/dev/null 2>&1; }

JOURNALD_CONF_TEXT='# Written by hal scripts/provision.sh (step journald).
# The engine sends every container line as one writer: keep them all.
[Journal]
RateLimitIntervalSec=0
SystemMaxUse=2G'

step_journald() {
    local tool
    for tool in journalctl systemd-cat; do
        command -v "$tool" >/dev/null || install_packages systemd
    done
    mkdir -p /etc/systemd/journald.conf.d
    if printf '%s\n' "$JOURNALD_CONF_TEXT" | write_if_changed /etc/systemd/journald.conf.d/hal-ci.conf 0644 &&
        pid_alive "$JOURNALD_PIDFILE"; then
        log "journald.conf.d/hal-ci.conf changed: restarting journald pid $(cat "$JOURNALD_PIDFILE")"
        local pid
        pid=$(cat "$JOURNALD_PIDFILE")
        kill -TERM "$pid"
        wait_for 20 bash -c "! kill -0 $pid" || die "journald (pid $pid) did not exit within 20s"
        rm -f "$JOURNALD_PIDFILE"
    fi
    if journal_live; then
        log "a journal answers"
        return 0
    fi
    [[ -x $JOURNALD ]] || install_packages systemd
    [[ -x $JOURNALD ]] || die "$JOURNALD missing (package systemd)"
    if pid_alive "$JOURNALD_PIDFILE"; then
        log "journald pid $(cat "$JOURNALD_PIDFILE") exists but takes no line yet; waiting"
    else
        log "starting journald (log $JOURNALD_LOG)"
        # Sockets left by a journald that died would refuse every writer.
        rm -f /run/systemd/journal/socket /run/systemd/journal/stdout /run/systemd/journal/dev-log
        mkdir -p /run/systemd/journal /var/log/journal
        echo "=== $(date -Is) hal provision: starting journald" >>"$JOURNALD_LOG"
        setsid nohup "$JOURNALD" >>"$JOURNALD_LOG" 2>&1 </dev/null 9>&- &
        echo $! >"$JOURNALD_PIDFILE"
    fi
    if ! wait_for 20 journal_live; then
        tail -n 20 "$JOURNALD_LOG" || true
        die "journald did not take a line within 20s (see $JOURNALD_LOG)"
    fi
    journalctl --quiet --no-pager -n 1 -t hal-provision >/dev/null || die "journalctl cannot read the journal"
    # Move to /var/log/journal (kept across reboots), as systemd-journal-flush.service would.
    journalctl --flush >/dev/null 2>&1 || log "journalctl --flush failed; the journal stays in /run"
    log "journald up (pid $(cat "$JOURNALD_PIDFILE"))"
}

fixture_hash() {
    { cat "$SCRIPT_DIR/fixture/Dockerfile"; sha256sum /bin/busybox; } | sha256sum | cut -c1-16
}

step_fixture() {
    [[ -x /bin/busybox ]] || die "/bin/busybox missing (busybox-static)"
    file_is_static /bin/busybox || die "/bin/busybox is not statically linked"
    local want have
    want=$(fixture_hash)
    have=$(docker image inspect -f '{{index .Config.Labels "hal.ci.fixture"}}' "$FIXTURE_IMAGE" 2>/dev/null || true)
    if [[ $have == "$want" ]]; then
        log "$FIXTURE_IMAGE present ($want)"
        return 0
    fi
    local ctx
    ctx=$(mktemp -d /tmp/hal-ci-fixture.XXXXXX)
    CLEANUP_PATHS+=("$ctx")
    cp "$SCRIPT_DIR/fixture/Dockerfile" "$ctx/Dockerfile"
    cp /bin/busybox "$ctx/busybox"
    log "building $FIXTURE_IMAGE"
    docker build --label "hal.ci.fixture=$want" -t "$FIXTURE_IMAGE" "$ctx"
    local out
    out=$(docker run --rm "$FIXTURE_IMAGE" sh -c 'echo ok; for a in sleep httpd wget cat test nc; do command -v $a >/dev/null || echo "missing $a"; done')
    [[ $out == ok ]] || die "fixture self-check failed: $out"
}

# ldd fails ("not a dynamic executable") on a static binary.
file_is_static() { ! ldd "$1" >/dev/null 2>&1; }

REGISTRY_YML="version: 0.1
log:
  level: info
  fields:
    service: hal-ci-registry
storage:
  filesystem:
    rootdirectory: $STATE_DIR/registry
  delete:
    enabled: true
http:
  addr: $REGISTRY_ADDR
  headers:
    X-Content-Type-Options: [nosniff]
"

registry_up() { curl -fsS -o /dev/null --max-time 2 "http://$REGISTRY_ADDR/v2/"; }

step_registry() {
    mkdir -p "$STATE_DIR/registry"
    local changed=0
    if printf '%s' "$REGISTRY_YML" | write_if_changed "$REGISTRY_CONF" 0644; then
        changed=1
        log "wrote $REGISTRY_CONF"
    fi
    if ((changed)) && pid_alive "$REGISTRY_PIDFILE"; then
        local pid
        pid=$(cat "$REGISTRY_PIDFILE")
        log "config changed; stopping registry pid $pid"
        kill -TERM "$pid"
        wait_for 20 bash -c "! kill -0 $pid" || die "registry (pid $pid) did not exit"
    fi
    if ! registry_up; then
        if pid_alive "$REGISTRY_PIDFILE"; then
            log "registry pid $(cat "$REGISTRY_PIDFILE") exists but does not answer yet; waiting"
        else
            if command -v ss >/dev/null && ss -Hltn "sport = :5000" | grep -q .; then
                die "something else listens on port 5000: $(ss -Hltnp 'sport = :5000')"
            fi
            log "starting docker-registry on $REGISTRY_ADDR (log $REGISTRY_LOG)"
            echo "=== $(date -Is) hal provision: starting docker-registry" >>"$REGISTRY_LOG"
            setsid nohup /usr/bin/docker-registry serve "$REGISTRY_CONF" \
                >>"$REGISTRY_LOG" 2>&1 </dev/null 9>&- &
            echo $! >"$REGISTRY_PIDFILE"
        fi
        if ! wait_for 30 registry_up; then
            echo "----- tail of $REGISTRY_LOG -----"
            tail -n 40 "$REGISTRY_LOG" || true
            die "registry did not answer http://$REGISTRY_ADDR/v2/ within 30s (see $REGISTRY_LOG)"
        fi
    fi
    log "registry answers on http://$REGISTRY_ADDR/v2/"

    # Push only when the registry does not already hold this exact image.
    local remote_digest local_digests
    remote_digest=$(curl -fsSI --max-time 5 \
        -H 'Accept: application/vnd.docker.distribution.manifest.v2+json' \
        "http://$REGISTRY_ADDR/v2/hal/fixture/manifests/latest" 2>/dev/null |
        tr -d '\r' | awk -F': ' 'tolower($1)=="docker-content-digest" {print $2}' || true)
    local_digests=$(docker image inspect -f '{{join .RepoDigests " "}}' "$FIXTURE_IMAGE")
    if [[ -n $remote_digest && " $local_digests " == *" ${FIXTURE_REMOTE%:latest}@$remote_digest "* ]]; then
        log "$FIXTURE_REMOTE up to date ($remote_digest)"
        return 0
    fi
    log "pushing $FIXTURE_REMOTE"
    docker tag "$FIXTURE_IMAGE" "$FIXTURE_REMOTE"
    docker push "$FIXTURE_REMOTE"
    curl -fsS "http://$REGISTRY_ADDR/v2/hal/fixture/tags/list"
    echo
}

# ---------------------------------------------------------------- podman

# Podman (Debian's 4.3), rootful, beside dockerd: its Docker-compatible API on
# $PODMAN_SOCK (`DOCKER_HOST=unix://$PODMAN_SOCK` points hal, compose and the docker
# CLI at it). Its own storage, networks and images; dockerd is not touched.
PODMAN_PACKAGES=(podman catatonit netavark aardvark-dns jq)

# Read by every podman on the machine (the service, `podman` commands): a host
# without systemd inside a container. Containers get limits under this machine's
# hard ones (rootful podman's default, nofile=1048576, fails in runc's setrlimit:
# "error setting rlimit type 7: operation not permitted"); `init: true` runs
# catatonit; no systemd: cgroupfs and the events in a file (`podman events` and the
# API's /events read them); logs in files (k8s-file: what `docker logs` reads);
# networks made for compose projects take subnets from pools clear of docker's.
PODMAN_CONF=/etc/containers/containers.conf.d/hal-ci.conf
PODMAN_CONF_TEXT='# Written by hal scripts/provision.sh (step podman); rewritten on every run.
[containers]
default_ulimits = ["nofile=16384:16384", "nproc=16384:16384"]
init_path = "/usr/bin/catatonit"
log_driver = "k8s-file"

[engine]
cgroup_manager = "cgroupfs"
events_logger = "file"
runtime = "runc"

[network]
network_backend = "netavark"
default_subnet_pools = [
  { base = "10.202.0.0/16", size = 24 },
  { base = "10.203.0.0/16", size = 24 },
]
'
# Docker treats 127.0.0.0/8 registries as plain HTTP; Podman must be told.
PODMAN_REGISTRIES_CONF=/etc/containers/registries.conf.d/hal-ci.conf
PODMAN_REGISTRIES_TEXT="# Written by hal scripts/provision.sh (step podman).
[[registry]]
location = \"$REGISTRY_ADDR\"
insecure = true
"

PODMAN_SOCK=$RUN_DIR/podman.sock
PODMAN_PIDFILE=$RUN_DIR/podman.pid
PODMAN_LOG=/var/log/hal-podman.log
PODMAN_HEALTH_BIN=/usr/local/libexec/hal-ci/podman-healthchecks
PODMAN_HEALTH_PIDFILE=$RUN_DIR/podman-healthchecks.pid
PODMAN_HEALTH_LOG=/var/log/hal-podman-healthchecks.log

# On a systemd host, Podman runs each container's healthcheck from a transient
# timer; here a loop does: every second, each running container with a
# healthcheck whose interval has passed gets one run (`podman healthcheck run`,
# through the service's libpod API: no podman process per check).
PODMAN_HEALTH_TEXT='#!/usr/bin/env bash
# Written by hal scripts/provision.sh (step podman): runs the Podman healthchecks on
# their interval, as the systemd timers Podman makes on a systemd host would.
#   podman-healthchecks SOCKET
set -uo pipefail
sock=$1
api=http://d/v4.0.0/libpod
# {"health":["starting","healthy","unhealthy"]}: running containers with a healthcheck.
filter=%7B%22health%22%3A%5B%22starting%22%2C%22healthy%22%2C%22unhealthy%22%5D%7D
declare -A every next job
while :; do
    ids=$(curl -fsS --max-time 5 --unix-socket "$sock" "$api/containers/json?filters=$filter" |
        jq -r ".[].Id") || { sleep 1; continue; }
    now=$(date +%s%3N)
    declare -A seen=()
    for id in $ids; do
        seen[$id]=1
        if [[ -z ${every[$id]:-} ]]; then
            ns=$(curl -fsS --max-time 5 --unix-socket "$sock" "$api/containers/$id/json" |
                jq -r ".Config.Healthcheck.Interval // 0") || continue
            every[$id]=$(( ns > 0 ? ns / 1000000 : 30000 ))
            next[$id]=$(( now + every[$id] ))
        fi
        (( now >= next[$id] )) || continue
        # One check at a time per container; a slow one is not started again.
        [[ -n ${job[$id]:-} ]] && kill -0 "${job[$id]}" 2>/dev/null && continue
        curl -sS --max-time 300 --unix-socket "$sock" -o /dev/null "$api/containers/$id/healthcheck" &
        job[$id]=$!
        next[$id]=$(( now + every[$id] ))
    done
    for id in "${!every[@]}"; do
        [[ -n ${seen[$id]:-} ]] || unset "every[$id]" "next[$id]" "job[$id]"
    done
    unset seen
    sleep 1
done
'

podman_up() { curl -fsS -o /dev/null --max-time 2 --unix-socket "$PODMAN_SOCK" http://d/_ping; }

# stop_pidfile NAME PIDFILE: TERM the process and wait for it to go.
stop_pidfile() {
    pid_alive "$2" || return 0
    local pid
    pid=$(cat "$2")
    log "stopping $1 (pid $pid)"
    kill -TERM "$pid"
    wait_for 30 bash -c "! kill -0 $pid" || die "$1 (pid $pid) did not exit within 30s"
    rm -f "$2"
}

step_podman() {
    install_packages "${PODMAN_PACKAGES[@]}"
    check_pool_routes podman 10.88.0.0/16 10.202.0.0/16 10.203.0.0/16
    mkdir -p "$(dirname "$PODMAN_CONF")" "$(dirname "$PODMAN_REGISTRIES_CONF")" "$(dirname "$PODMAN_HEALTH_BIN")"
    local changed=0
    if printf '%s' "$PODMAN_CONF_TEXT" | write_if_changed "$PODMAN_CONF" 0644; then
        changed=1
        log "wrote $PODMAN_CONF"
    fi
    if printf '%s' "$PODMAN_REGISTRIES_TEXT" | write_if_changed "$PODMAN_REGISTRIES_CONF" 0644; then
        changed=1
        log "wrote $PODMAN_REGISTRIES_CONF"
    fi
    # A service left in a removed directory fails every container start (conmon cannot get its
    # working directory: "write child: broken pipe"): start it again, from /.
    if pid_alive "$PODMAN_PIDFILE" && [[ $(readlink "/proc/$(cat "$PODMAN_PIDFILE")/cwd") == *" (deleted)" ]]; then
        changed=1
        log "the podman service's working directory is gone; restarting it"
    fi
    ((changed == 0)) || stop_pidfile "podman service" "$PODMAN_PIDFILE"

    if ! podman_up; then
        if pid_alive "$PODMAN_PIDFILE"; then
            log "podman service pid $(cat "$PODMAN_PIDFILE") exists but does not answer yet; waiting"
        else
            log "starting podman system service on $PODMAN_SOCK (log $PODMAN_LOG)"
            echo "=== $(date -Is) hal provision: starting podman system service" >>"$PODMAN_LOG"
            # From /: conmon inherits the service's directory and fails every container
            # ("write child: broken pipe") once that directory is gone (a removed checkout).
            (cd / && exec setsid nohup podman system service --time=0 "unix://$PODMAN_SOCK" \
                >>"$PODMAN_LOG" 2>&1 </dev/null 9>&-) &
            echo $! >"$PODMAN_PIDFILE"
        fi
        if ! wait_for 30 podman_up; then
            echo "----- tail of $PODMAN_LOG -----"
            tail -n 40 "$PODMAN_LOG" || true
            die "podman did not answer on $PODMAN_SOCK within 30s (see $PODMAN_LOG)"
        fi
    fi
    log "$(podman --version) answers on $PODMAN_SOCK"

    # The fixture, the same image (same ID) as docker's, under both of its names.
    local want have
    want=$(docker image inspect -f '{{.Id}}' "$FIXTURE_IMAGE")
    have=$(podman image inspect --format '{{.Id}}' "$FIXTURE_IMAGE" 2>/dev/null || true)
    if [[ sha256:$have != "$want" ]]; then
        log "loading $FIXTURE_IMAGE ($want) into podman"
        docker save "$FIXTURE_IMAGE" | podman load -q
    fi
    have=$(podman image inspect --format '{{.Id}}' "$FIXTURE_REMOTE" 2>/dev/null || true)
    [[ sha256:$have == "$want" ]] || podman tag "$FIXTURE_IMAGE" "$FIXTURE_REMOTE"
    # The docker CLI's attach to Podman sometimes answers 409 ("unable to upgrade
    # to tcp") on a loaded machine: a container that runs is what is checked.
    local out tries
    for tries in 1 2 3; do
        out=$(DOCKER_HOST=unix://$PODMAN_SOCK docker run --rm --init "$FIXTURE_IMAGE" sh -c 'echo ok' 2>&1) && break
        log "docker run on podman, try $tries: $out"
        sleep 1
    done
    [[ $out == ok ]] || die "docker run on podman: '$out' (want ok)"

    # The healthcheck loop: restarted when its text changes.
    if printf '%s' "$PODMAN_HEALTH_TEXT" | write_if_changed "$PODMAN_HEALTH_BIN" 0755; then
        log "wrote $PODMAN_HEALTH_BIN"
        stop_pidfile "podman healthcheck loop" "$PODMAN_HEALTH_PIDFILE"
    fi
    if ! pid_alive "$PODMAN_HEALTH_PIDFILE"; then
        log "starting $PODMAN_HEALTH_BIN (log $PODMAN_HEALTH_LOG)"
        echo "=== $(date -Is) hal provision: starting podman healthcheck loop" >>"$PODMAN_HEALTH_LOG"
        setsid nohup "$PODMAN_HEALTH_BIN" "$PODMAN_SOCK" >>"$PODMAN_HEALTH_LOG" 2>&1 </dev/null 9>&- &
        echo $! >"$PODMAN_HEALTH_PIDFILE"
    fi
}

# Run the systemd image the way the tests will (unprivileged) and check that
# systemd boots and a root user manager comes up.
verify_systemd_image() {
    local name=hal-ci-systemd-check-$$ state=""
    docker rm -f "$name" >/dev/null 2>&1 || true
    CLEANUP_CONTAINERS+=("$name")
    docker run -d --name "$name" \
        --tmpfs /run --tmpfs /run/lock --tmpfs /tmp \
        -e container=docker \
        -v /sys/fs/cgroup:/sys/fs/cgroup:ro \
        "$SYSTEMD_IMAGE" >/dev/null
    local t0=$SECONDS
    for _ in $(seq 1 60); do
        state=$(docker exec "$name" systemctl is-system-running 2>/dev/null || true)
        case $state in running | degraded) break ;; esac
        sleep 0.5
    done
    log "systemctl is-system-running = '${state}' after $((SECONDS - t0))s"
    case $state in
        running | degraded) ;;
        *)
            docker logs "$name" 2>&1 | tail -n 40 || true
            docker exec "$name" systemctl --failed --no-pager 2>&1 || true
            die "systemd in $SYSTEMD_IMAGE did not reach running/degraded (state '$state')"
            ;;
    esac
    docker exec "$name" systemctl --failed --no-pager --plain || true
    docker exec "$name" sh -c 'loginctl enable-linger root && systemctl start user@0.service' ||
        die "could not start user@0.service in $SYSTEMD_IMAGE"
    local ok=0
    for _ in $(seq 1 30); do
        if docker exec -e XDG_RUNTIME_DIR=/run/user/0 "$name" systemctl --user is-system-running >/dev/null 2>&1 ||
            docker exec -e XDG_RUNTIME_DIR=/run/user/0 "$name" systemctl --user status >/dev/null 2>&1; then
            ok=1
            break
        fi
        sleep 0.5
    done
    docker exec -e XDG_RUNTIME_DIR=/run/user/0 "$name" systemctl --user status --no-pager 2>&1 | head -n 20 || true
    ((ok)) || die "user manager (systemctl --user) did not come up in $SYSTEMD_IMAGE"
    log "user manager: $(docker exec -e XDG_RUNTIME_DIR=/run/user/0 "$name" systemctl --user is-system-running 2>&1 || true)"
    docker rm -f "$name" >/dev/null
}

# Changes to the recipe (this function's text) make the image stale.
systemd_recipe_hash() { declare -f step_systemd_image | sha256sum | cut -c1-16; }

step_systemd_image() {
    local want have
    want=$(systemd_recipe_hash)
    have=$(docker image inspect -f '{{index .Config.Labels "hal.ci.systemd"}}' "$SYSTEMD_IMAGE" 2>/dev/null || true)
    if [[ $have == "$want" ]]; then
        log "$SYSTEMD_IMAGE present ($want)"
        if [[ ${HAL_CI_VERIFY_SYSTEMD:-0} == 1 ]]; then
            verify_systemd_image
        fi
        return 0
    fi
    local mirror root t0=$SECONDS
    mirror=$(debian_mirror)
    root=$(mktemp -d /var/tmp/hal-ci-rootfs.XXXXXX)
    CLEANUP_PATHS+=("$root")
    log "debootstrap bookworm from $mirror into $root"
    debootstrap --variant=minbase \
        --include=systemd,systemd-sysv,dbus,dbus-user-session \
        bookworm "$root" "$mirror" ||
        {
            tail -n 40 "$root/debootstrap/debootstrap.log" 2>/dev/null || true
            die "debootstrap failed"
        }
    log "debootstrap took $((SECONDS - t0))s"

    # Trim and container-ise the rootfs.
    rm -rf "$root"/var/cache/apt/archives/*.deb "$root"/var/lib/apt/lists/* "$root"/var/log/*.log
    : >"$root/etc/machine-id" # systemd makes a fresh one per container
    rm -f "$root/var/lib/dbus/machine-id"
    echo hal-systemd >"$root/etc/hostname"
    # No units are masked: on this kernel/docker combination a stock bookworm
    # systemd boots to "running" with zero failed units (its container conditions
    # already skip udev, remount-fs, modules-load, kernel-* mounts and so on).

    log "importing $SYSTEMD_ROOTFS_IMAGE"
    CLEANUP_IMAGES+=("$SYSTEMD_ROOTFS_IMAGE" "$SYSTEMD_IMAGE") # dropped unless verified below
    tar -C "$root" --numeric-owner -c . | docker import \
        --message "hal provision: debootstrap bookworm minbase + systemd" \
        - "$SYSTEMD_ROOTFS_IMAGE"
    rm -rf "$root"
    # `docker import --change` cannot set STOPSIGNAL; a one-line build on top can.
    log "building $SYSTEMD_IMAGE"
    docker build -t "$SYSTEMD_IMAGE" - <<EOF_DOCKERFILE
FROM $SYSTEMD_ROOTFS_IMAGE
ENV container=docker
STOPSIGNAL SIGRTMIN+3
LABEL hal.ci.systemd="$want" \\
      org.opencontainers.image.title="hal-systemd" \\
      org.opencontainers.image.description="Debian bookworm minbase + systemd, for hal's host-module tests"
CMD ["/sbin/init"]
EOF_DOCKERFILE
    docker rmi "$SYSTEMD_ROOTFS_IMAGE" >/dev/null # untag; layers stay under $SYSTEMD_IMAGE

    verify_systemd_image
    CLEANUP_IMAGES=() # verified: keep it
}

cargo_on_path() {
    if ! command -v cargo >/dev/null; then
        local home=${HOME:-$(getent passwd "$(id -u)" | cut -d: -f6)}
        PATH=${CARGO_HOME:-$home/.cargo}/bin:$PATH
    fi
    command -v cargo >/dev/null || die "cargo not found (looked on PATH and in \$CARGO_HOME/bin or ~/.cargo/bin)"
}

step_cargo() {
    cargo_on_path
    log "$(command -v cargo): $(cargo --version)"
}

# cargo-deb builds the Debian package (`cargo deb`); tests/integration/install.rs runs it.
step_cargo_deb() {
    cargo_on_path
    local have
    have=$(cargo deb --version 2>/dev/null || true)
    if [[ $have == "cargo-deb $CARGO_DEB_VERSION" ]]; then
        log "$have present"
        return 0
    fi
    log "installing cargo-deb $CARGO_DEB_VERSION (had: ${have:-none})"
    cargo install cargo-deb --locked --version "$CARGO_DEB_VERSION" ||
        die "cargo install cargo-deb --locked --version $CARGO_DEB_VERSION failed"
    have=$(cargo deb --version 2>/dev/null || true)
    [[ $have == "cargo-deb $CARGO_DEB_VERSION" ]] || die "cargo deb --version says '${have}' after the install"
}

# A clean machine for installing hal: the systemd image plus man-db (so `man hal`
# is checked as a user would run it) and make (for `make install`/`uninstall`).
# Stale when this recipe or the systemd image changes.
install_recipe_hash() {
    { declare -f step_install_image; docker image inspect -f '{{.Id}}' "$SYSTEMD_IMAGE"; } | sha256sum | cut -c1-16
}

# ansible-core (ansible-playbook, ansible-galaxy, ansible-test) for the collection in
# ansible/hal/node and its tests (tests/integration/fleet.rs): from the package index.
step_ansible() {
    if command -v ansible-playbook >/dev/null && command -v ansible-test >/dev/null; then
        log "$(ansible-playbook --version | head -1) present"
        return 0
    fi
    python3 -m pip install --quiet ansible-core || die "pip install ansible-core failed"
}

step_install_image() {
    local want have
    want=$(install_recipe_hash)
    have=$(docker image inspect -f '{{index .Config.Labels "hal.ci.install"}}' "$INSTALL_IMAGE" 2>/dev/null || true)
    if [[ $have == "$want" ]]; then
        log "$INSTALL_IMAGE present ($want)"
        return 0
    fi
    log "building $INSTALL_IMAGE from $SYSTEMD_IMAGE"
    # The apt lists are dropped again: the machine is as clean as the systemd
    # image, so `apt-get install ./hal_*.deb` there downloads nothing.
    docker build -t "$INSTALL_IMAGE" - <<EOF_DOCKERFILE
FROM $SYSTEMD_IMAGE
RUN apt-get -qq update && \\
    DEBIAN_FRONTEND=noninteractive apt-get -qq install --no-install-recommends man-db make && \\
    rm -rf /var/lib/apt/lists/* /var/cache/apt/archives/*.deb
LABEL hal.ci.install="$want" \\
      org.opencontainers.image.title="hal-install" \\
      org.opencontainers.image.description="hal-systemd:bookworm + man-db and make, for hal's install tests"
EOF_DOCKERFILE
    docker run --rm --entrypoint /bin/sh "$INSTALL_IMAGE" -c 'command -v man && command -v make' ||
        die "$INSTALL_IMAGE lacks man or make"
}

# ---------------------------------------------------------------- main

# One provisioner at a time (fd 9 is closed for the daemons started below).
exec 9>"$RUN_DIR/provision.lock"
if command -v flock >/dev/null && ! flock -n 9; then
    echo "provision: waiting for another provision run to finish ($RUN_DIR/provision.lock)" >&2
    flock -w 1800 9 || { echo "provision: gave up waiting for $RUN_DIR/provision.lock" >&2; exit 1; }
fi

: >"$LOG_DIR/timings.txt"
run_step packages step_packages
run_step compose-plugin step_compose_plugin
run_step journald step_journald
run_step dockerd step_dockerd
run_step fixture step_fixture
run_step registry step_registry
run_step podman step_podman
run_step systemd-image step_systemd_image
run_step cargo step_cargo
run_step cargo-deb step_cargo_deb
run_step install-image step_install_image
run_step ansible step_ansible
