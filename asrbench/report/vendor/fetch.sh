#!/usr/bin/env bash
# Re-fetch the vendored chart library from the npm registry and check it against vendor.json:
# the tarball's integrity (what npm's lockfiles record) and the file's SHA-256. Run by hand when
# bumping the version (then update vendor.json); the build only checks the SHA-256.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
tmp="$(mktemp -d)"; trap 'rm -rf "$tmp"' EXIT
read -r pkg ver integ path sha < <(python3 - "$here/vendor.json" <<'PY'
import json, sys
v = json.load(open(sys.argv[1]))["plotly"]
print(v["package"], v["version"], v["npm_integrity"], v["path_in_package"], v["sha256"])
PY
)
(cd "$tmp" && npm pack --silent "$pkg@$ver" >/dev/null)
tgz="$(ls "$tmp"/*.tgz)"
got="sha512-$(openssl dgst -sha512 -binary "$tgz" | base64 -w0)"
[ "$got" = "$integ" ] || { echo "integrity mismatch: $got != $integ" >&2; exit 1; }
tar -xzf "$tgz" -C "$tmp" "$path"
echo "$sha  $tmp/$path" | sha256sum -c --quiet
cp "$tmp/$path" "$here/plotly-basic.min.js"
echo "ok: $pkg@$ver (integrity and SHA-256 match vendor.json)"
