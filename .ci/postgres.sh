#!/usr/bin/env bash
# Install (if needed) and start a local PostgreSQL for the store tests, then print the DSN.
#
# Idempotent: on a fresh Debian 12 machine (as root) it installs Debian's postgresql package,
# creates/starts cluster "main" listening on 127.0.0.1, and creates role + database
# "pausepoint"; when everything already exists and runs, it changes nothing.
# PP_PG_CLUSTER, PP_PG_PORT, PP_PG_USER, PP_PG_PASSWORD, PP_PG_DB override the defaults.
# Usage:  eval "$(.ci/postgres.sh | tail -n 1)"   or   source .ci/postgres.sh
# The last line printed is:  export PAUSEPOINT_PG_DSN=postgresql://...

# When sourced, do the work in a child bash (so `set -e` and `exit` cannot touch the caller's
# shell) and export the DSN it prints into the caller.
if (return 0 2>/dev/null); then
    _pp_line="$(bash "${BASH_SOURCE[0]}")" || return 1
    _pp_line="${_pp_line##*$'\n'}"
    case "${_pp_line}" in
        "export PAUSEPOINT_PG_DSN="*) eval "${_pp_line}"; unset _pp_line; return 0 ;;
        *) unset _pp_line; return 1 ;;
    esac
fi
set -euo pipefail

PP_PG_USER="${PP_PG_USER:-pausepoint}"
PP_PG_PASSWORD="${PP_PG_PASSWORD:-pausepoint}"
PP_PG_DB="${PP_PG_DB:-pausepoint}"
PP_PG_PORT="${PP_PG_PORT:-5432}"
PP_PG_CLUSTER="${PP_PG_CLUSTER:-main}"

_pp_log() { echo "postgres.sh: $*" >&2; }

if ! command -v pg_lsclusters >/dev/null 2>&1 || ! ls /usr/lib/postgresql/*/bin/postgres >/dev/null 2>&1; then
    _pp_log "installing postgresql from Debian packages"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >&2
    apt-get install -y -qq postgresql >&2
fi

PP_PG_VERSION="$(ls /usr/lib/postgresql | sort -V | tail -n 1)"

if ! pg_lsclusters -h | awk '{print $1" "$2}' | grep -qx "${PP_PG_VERSION} ${PP_PG_CLUSTER}"; then
    _pp_log "creating cluster ${PP_PG_VERSION}/${PP_PG_CLUSTER}"
    pg_createcluster --port "${PP_PG_PORT}" "${PP_PG_VERSION}" "${PP_PG_CLUSTER}" >&2
fi

if ! pg_lsclusters -h | awk -v v="${PP_PG_VERSION}" -v c="${PP_PG_CLUSTER}" \
        '$1==v && $2==c {print $4}' | grep -q online; then
    _pp_log "starting cluster ${PP_PG_VERSION}/${PP_PG_CLUSTER}"
    pg_ctlcluster "${PP_PG_VERSION}" "${PP_PG_CLUSTER}" start >&2
fi

for _ in $(seq 1 60); do
    if pg_isready -q -h 127.0.0.1 -p "${PP_PG_PORT}"; then break; fi
    sleep 0.5
done
pg_isready -h 127.0.0.1 -p "${PP_PG_PORT}" >&2

_pp_psql() { (cd / && su postgres -c "psql -p ${PP_PG_PORT} -v ON_ERROR_STOP=1 -qtAX $*"); }

if [ "$(_pp_psql "-c \"SELECT 1 FROM pg_roles WHERE rolname = '${PP_PG_USER}'\"")" != "1" ]; then
    _pp_log "creating role ${PP_PG_USER}"
    _pp_psql "-c \"CREATE ROLE ${PP_PG_USER} LOGIN PASSWORD '${PP_PG_PASSWORD}'\"" >&2
else  # converge: an existing role gets the login and password the DSN below promises
    _pp_psql "-c \"ALTER ROLE ${PP_PG_USER} LOGIN PASSWORD '${PP_PG_PASSWORD}'\"" >&2
fi
if [ "$(_pp_psql "-c \"SELECT 1 FROM pg_database WHERE datname = '${PP_PG_DB}'\"")" != "1" ]; then
    _pp_log "creating database ${PP_PG_DB}"
    (cd / && su postgres -c "createdb -p ${PP_PG_PORT} -O ${PP_PG_USER} ${PP_PG_DB}") >&2
fi

PP_PG_DSN="postgresql://${PP_PG_USER}:${PP_PG_PASSWORD}@127.0.0.1:${PP_PG_PORT}/${PP_PG_DB}"
# The server must accept a password login over TCP on loopback before we report success.
PGPASSWORD="${PP_PG_PASSWORD}" psql "${PP_PG_DSN}" -qtAX -c "SELECT 1" >/dev/null
export PAUSEPOINT_PG_DSN="${PP_PG_DSN}"
_pp_log "ready"
echo "export PAUSEPOINT_PG_DSN=${PP_PG_DSN}"
