#!/bin/bash
# SPDX-License-Identifier: MIT
# make check-package: the Debian package built from the release tree
# (dpkg-buildpackage -b), lintian clean, installed with apt in a clean
# Debian 12 root and its autopkgtest run there (tests/package/package_debian.sh,
# PROOF: package.debian).  Uses the tree CI already built (quickstart
# configures in-tree), else its own build in /tmp/ci-package.  The clean root
# is cached (tools/debian-root).
set -euo pipefail
cd "$(dirname "$0")/../.."
. tests/lib/ci_lib.sh
ci_target package check-package
