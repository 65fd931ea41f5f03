#!/usr/bin/env bash
# Lints .github/workflows/*.yml: GitHub's workflow schema (check-jsonschema's vendored copy, no
# network needed) and zizmor's security audits (offline: unpinned actions, persisted
# credentials, missing permissions, template injection). Both come from PyPI, pinned, into a
# private venv (~/.cache/syncbench/lint-venv) made once.
set -euo pipefail
cd "$(dirname "$0")/.."
venv="${SYNCBENCH_LINT_VENV:-$HOME/.cache/syncbench/lint-venv}"
want="zizmor==1.33.1 check-jsonschema==0.39.0"
if [ ! -x "$venv/bin/zizmor" ] || [ ! -x "$venv/bin/check-jsonschema" ] || [ "$(cat "$venv/.pins" 2>/dev/null)" != "$want" ]; then
  python3 -m venv "$venv"
  # shellcheck disable=SC2086
  "$venv/bin/pip" install -q --disable-pip-version-check $want
  echo "$want" > "$venv/.pins"
fi
"$venv/bin/check-jsonschema" --builtin-schema vendor.github-workflows .github/workflows/*.yml
"$venv/bin/zizmor" --offline --no-progress .github/workflows/
