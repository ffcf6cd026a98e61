#!/bin/bash
# SPDX-License-Identifier: MIT
# make check-package: the Debian package built from the release tree
# (dpkg-buildpackage -b), lintian clean, installed with apt in a clean
# Debian 12 root and its autopkgtest run there (tests/package/package_debian.sh,
# PROOF: package.debian).  Uses the tree CI already built (quickstart
# configures in-tree), else its own build in /tmp/ci-package.  The clean root
# is cached (tools/debian-root).  The package build skips its unit tests
# (DEB_BUILD_OPTIONS=nocheck): 15-distcheck ran the whole suite from the same
# release tree, and `make check-package` outside CI still runs them there.
set -euo pipefail
export DEB_BUILD_OPTIONS=${DEB_BUILD_OPTIONS:-nocheck}
cd "$(dirname "$0")/../.."
. tests/lib/ci_lib.sh
ci_target package check-package
