# SPDX-License-Identifier: MIT
# Sourced by tools/install-deps, tools/deps/libffi-source.sh,
# tools/deps/lua-source.sh, tools/deps/cpython-source.sh,
# tools/deps/perf-backports.sh and tools/guest (POSIX sh).  apt_update and
# deb_src_on need $APT and $SUDO.
#
#   apt_update LOG      apt-get update, appended to LOG; 0 when the lists
#                       are usable (see below), 1 when they are not
#   deb_src_on LOG      switch on source packages from the machine's own
#                       mirror (a deb-src twin of its sources); 0 when they
#                       already were on, 2 when this call switched them on
#   apt_mirror [SUITE]  the URI of the machine's Debian archive, as its apt
#                       sources write it (see below); 1 when there is none
#   private_apt DIR TYPE SUITE
#                       an apt configuration of apt-get's own in DIR (no
#                       blanks in DIR): a sources.list of the one line
#                       "TYPE <apt_mirror> SUITE main", lists and archives
#                       in DIR, the machine's dpkg status; sets $PRIVATE_APT,
#                       the options to pass apt-get unquoted.  The machine's
#                       sources, lists and caches are left as they are, and
#                       no root is needed.  1 when the machine names no
#                       Debian mirror.

# A mirror being synced serves a Release file whose sizes or hashes do not
# match the index files yet ("File has unexpected size ... Mirror sync in
# progress?", "Hash Sum mismatch"): seen on a fresh machine for one
# architecture's security index, and gone minutes later.  So apt_update
# tries 4 times, 15, 30 and 60 s apart.  If only index files still fail,
# apt has kept every list it did get: that is a warning naming them, and
# a package that truly cannot be had stops the install that asks for it,
# by name.  Anything else (no network, a broken sources file) is a failure.
apt_update() {
    _log=$1 _try=1 _wait=15
    while :; do
        _mark=0
        [ ! -f "$_log" ] || _mark=$(wc -l < "$_log")
        if $APT update >> "$_log" 2>&1; then
            return 0
        fi
        _errors=$(tail -n +"$((_mark + 1))" "$_log" | grep '^E:' || true)
        [ "$_try" -lt 4 ] || break
        echo "install-deps: apt-get update failed (try $_try of 4), again in ${_wait}s:" >&2
        printf '%s\n' "$_errors" | sed 's/^/    /' >&2
        sleep "$_wait"
        _try=$((_try + 1)) _wait=$((_wait * 2))
    done
    # only index files failed (apt goes on without them)?
    if [ -n "$_errors" ] && ! printf '%s\n' "$_errors" |
        grep -v -e '^E: Failed to fetch ' -e '^E: Some index files failed to download' > /dev/null; then
        echo "install-deps: WARNING: apt-get update still fails for these index files after 4 tries;" \
            "going on with the lists apt has (a package only they name will fail to install, by name):" >&2
        printf '%s\n' "$_errors" | sed 's/^/    /' >&2
        return 0
    fi
    tail -n 20 "$_log" >&2
    return 1
}

deb_src_on() {
    if grep -qs '^Types:.*deb-src' /etc/apt/sources.list.d/*.sources ||
        grep -qs '^deb-src' /etc/apt/sources.list; then
        return 0
    fi
    _src=/etc/apt/sources.list.d/perftramp-deb-src.sources
    if [ -f /etc/apt/sources.list.d/debian.sources ]; then
        sed 's/^Types: *deb$/Types: deb-src/' /etc/apt/sources.list.d/debian.sources | $SUDO sh -c "cat > $_src"
    else
        grep -h '^deb ' /etc/apt/sources.list | sed 's/^deb /deb-src /' | $SUDO sh -c "cat > ${_src%.sources}.list"
    fi
    echo "install-deps: source packages switched on in $_src" >> "$1"
    return 2
}

# The machine's Debian archive, for tools that fetch from Debian themselves
# (mmdebstrap in tools/guest): the URI of the first enabled "deb" entry for
# SUITE (default: this release's codename, VERSION_CODENAME in
# /etc/os-release) with the component main, as written (a local mirror, or
# a proxy's URI such as apt-cacher-ng's host:3142/..., is used as is).  Entries come from
# sources.list, then sources.list.d in name order: one-line *.list files
# ("deb [options] URI SUITE COMPONENT...") and deb822 *.sources stanzas
# (Types, URIs, Suites, Components, Enabled; several URIs or suites per
# stanza, continuation lines).  Where several match (a vendor's "bookworm
# main" repository beside Debian's), the one whose Release file apt has
# fetched says "Origin: Debian" wins.  $PT_APT_ETC (default /etc/apt) and
# $PT_APT_LISTS (/var/lib/apt/lists) stand in for apt's directories in
# tests/tools/apt_mirror.sh.
apt_mirror() {
    _suite=${1:-$(sed -n 's/^VERSION_CODENAME=//p' /etc/os-release 2> /dev/null | tr -d '"')}
    [ -n "$_suite" ] || return 1
    _uris=$(apt_deb_entries | awk -v s="$_suite" '$2 == s { for (i = 3; i <= NF; i++) if ($i == "main") { print $1; next } }')
    [ -n "$_uris" ] || return 1
    for _u in $_uris; do
        if apt_release_is_debian "$_u" "$_suite"; then
            echo "${_u%/}"
            return 0
        fi
    done
    _u=$(printf '%s\n' "$_uris" | head -n 1)
    echo "${_u%/}"
}

# "URI SUITE COMPONENT..." for every enabled deb entry of the apt sources.
apt_deb_entries() {
    _etc=${PT_APT_ETC:-/etc/apt}
    for _f in "$_etc/sources.list" "$_etc"/sources.list.d/*; do
        [ -f "$_f" ] || continue
        case $_f in
        *.list) awk '{ sub(/(^|[ \t])#.*/, "") } $1 == "deb" {
                    sub(/^[ \t]*deb[ \t]+(\[[^]]*\][ \t]*)?/, ""); if (NF >= 3) print }' "$_f" ;;
        *.sources) awk '
                function flush(   nu, ns, u, s, i, j) {
                    if (f["types"] ~ /(^|[ \t])deb([ \t]|$)/ && tolower(f["enabled"]) !~ /^[ \t]*no[ \t]*$/) {
                        nu = split(f["uris"], u, /[ \t]+/); ns = split(f["suites"], s, /[ \t]+/)
                        for (i = 1; i <= nu; i++) for (j = 1; j <= ns; j++)
                            if (u[i] != "" && s[j] != "") print u[i], s[j], f["components"]
                    }
                    split("", f); key = ""
                }
                /^#/ { next }
                /^[ \t]*$/ { flush(); next }
                /^[ \t]/ { if (key != "") f[key] = f[key] " " $0; next }
                { i = index($0, ":"); key = tolower(substr($0, 1, i - 1)); f[key] = substr($0, i + 1) }
                END { flush() }' "$_f" ;;
        esac
    done
}

# Whether the Release file apt fetched for URI SUITE says "Origin: Debian"
# (its list file name: the URI without scheme and login, '_' and '~' quoted
# as apt quotes them, '/' turned into '_').
apt_release_is_debian() {
    _l=$(printf '%s' "${1%/}" | sed -e 's,^[a-z0-9+]*://,,' -e 's,^[^/@]*@,,' -e 's,_,%5f,g' -e 's,~,%7e,g' -e 's,/,_,g')
    _l=${PT_APT_LISTS:-/var/lib/apt/lists}/${_l}_dists_$2_
    grep -qs '^Origin: Debian$' "${_l}InRelease" "${_l}Release"
}

private_apt() {
    _dir=$1 _mirror=$(apt_mirror)
    [ -n "$_mirror" ] || return 1
    mkdir -p "$_dir/lists/partial" "$_dir/archives/partial" "$_dir/parts" "$_dir/prefs"
    echo "$2 [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $_mirror $3 main" > "$_dir/sources.list"
    PRIVATE_APT="-o Dir::Etc::SourceList=$_dir/sources.list -o Dir::Etc::SourceParts=$_dir/parts
        -o Dir::Etc::PreferencesParts=$_dir/prefs -o Dir::Etc::Preferences=$_dir/prefs/none
        -o Dir::State::Lists=$_dir/lists -o Dir::Cache=$_dir -o Dir::Cache::Archives=$_dir/archives
        -o Dir::Cache::pkgcache= -o Dir::Cache::srcpkgcache= -o Debug::NoLocking=1
        -o APT::Sandbox::User=$(id -un)"
}
