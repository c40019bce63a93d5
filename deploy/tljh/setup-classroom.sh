#!/usr/bin/env bash
# The classroom on The Littlest JupyterHub (TLJH): the same hub configuration as
# `make classroom` (shared-password students, an admin teacher on the projector page),
# with TLJH's own isolation: one system user a student (jupyter-<name>), each server a
# systemd unit with a memory limit, HTTPS if TLJH is set up for it. Not run on the
# project's machine (TLJH installs itself as the machine's system service); see
# deploy/README.md.
#
# On a TLJH server (JupyterHub 5.3 or newer in /opt/tljh/hub, for the shared-password
# authenticator), from a checkout of this repository, as root:
#
#   REPO_URL=https://github.com/OWNER/context-compression-lab STUDENTS="ana ben cai" \
#   PASSWORD=... TEACHER=teacher TEACHER_PASSWORD=... bash deploy/tljh/setup-classroom.sh
#
# PASSWORD: at least 8 characters; TEACHER_PASSWORD: at least 32 (JupyterHub's rules).
set -euo pipefail
cd "$(dirname "$0")/../.."

: "${REPO_URL:?the repository's git address, e.g. https://github.com/OWNER/context-compression-lab}"
: "${STUDENTS:?the students' names, separated by spaces}"
: "${PASSWORD:?the students' shared password (8 characters or more)}"
: "${TEACHER_PASSWORD:?the teacher's password (32 characters or more)}"
BRANCH="${BRANCH:-main}"
TEACHER="${TEACHER:-teacher}"
# From docs/benchmark_classroom.md: a student's server and kernel hold about 300 MB.
MEMORY_LIMIT="${MEMORY_LIMIT:-1G}"

# The lab (the chapters' packages and minilib) and nbgitpuller, in the users' environment.
/opt/tljh/user/bin/python -m pip install --quiet \
  "context-compression-lab[notebooks] @ git+${REPO_URL}@${BRANCH}" nbgitpuller

tljh-config set auth.type shared-password
tljh-config set auth.SharedPasswordAuthenticator.user_password "$PASSWORD"
tljh-config set auth.SharedPasswordAuthenticator.admin_password "$TEACHER_PASSWORD"
for name in $STUDENTS; do
  tljh-config add-item users.allowed "$name"
done
tljh-config add-item users.admin "$TEACHER"
tljh-config set user_environment.default_app jupyterlab
tljh-config set limits.memory "$MEMORY_LIMIT"

# Each student's copy through nbgitpuller, the teacher on the projector page.
install -d /opt/tljh/config/jupyterhub_config.d
sed -e "s|^REPO_URL = .*|REPO_URL = \"${REPO_URL}\"|" \
    -e "s|^BRANCH = .*|BRANCH = \"${BRANCH}\"|" \
    deploy/hub_snippet.py > /opt/tljh/config/jupyterhub_config.d/classroom.py

tljh-config reload hub
