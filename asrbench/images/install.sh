#!/bin/sh
# Copied into every model image build as /opt/build/install.sh: makes /opt/venv and installs the
# model's requirements, from the host-built wheelhouse (hermetic, default) or from the network.
set -eu
req="$1"
python3 -m venv /opt/venv
if [ -f /opt/build/ca.crt ]; then export PIP_CERT=/opt/build/ca.crt; fi
if ! grep -qv '^[[:space:]]*\(#.*\)\{0,1\}$' "$req"; then exit 0; fi
if [ "${BUILD_MODE:-wheelhouse}" = wheelhouse ]; then
  /opt/venv/bin/pip install --no-cache-dir --no-index --find-links /opt/build/wheels -r "$req"
else
  /opt/venv/bin/pip install --no-cache-dir -r "$req"
fi
