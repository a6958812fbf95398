# Shared helpers for the editor test scripts (sourced, not run).
# Exit status 77 means "skipped": tests/CMakeLists.txt sets SKIP_RETURN_CODE 77.
skip() {
  echo "SKIP: $*"
  exit 77
}

# Installs the npm dependencies of directory $1 from its lockfile with `npm ci`,
# unless node_modules already matches that lockfile.
npm_ci() {
  local dir="$1" stamp="$1/node_modules/.argus-lock.sha256" sum
  sum="$(sha256sum "$dir/package-lock.json" | cut -d' ' -f1)"
  if [[ -f "$stamp" && "$(cat "$stamp")" == "$sum" ]]; then
    return 0
  fi
  echo "npm ci in $dir"
  (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error) || return 1
  echo "$sum" > "$stamp"
}
