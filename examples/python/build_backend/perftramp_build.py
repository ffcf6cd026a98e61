# SPDX-License-Identifier: MIT
"""A PEP 517 build backend for perftramp's CPython module, standard library only.

`pip install ./examples/python` calls it (pyproject.toml names it).  It
compiles perftramp_module.c against the running interpreter's headers and an
installed libperftramp that pkg-config finds, and packs the extension with
perftramp/__init__.py and __main__.py into a wheel.  The wheel's version is
the library's (pkg-config --modversion perftramp).

Environment: CC (default: the interpreter's own compiler), CFLAGS, LDFLAGS,
PKG_CONFIG (default pkg-config; e.g. "pkg-config --define-variable=prefix=DIR"),
and pkg-config's own PKG_CONFIG_PATH and PKG_CONFIG_SYSROOT_DIR.  The module
finds libperftramp at run time through an rpath to each library directory
pkg-config names.

Wheel layout: PEP 427 (a zip with NAME-VERSION.dist-info/{METADATA,WHEEL,
RECORD}); RECORD hashes: sha256, urlsafe base64 without padding.
"""
import base64
import hashlib
import io
import os
import shlex
import subprocess
import sys
import sysconfig
import tarfile
import tempfile
import tomllib
import zipfile

HERE = os.getcwd()  # pip runs the backend in the project directory
PACKAGE_FILES = ["perftramp/__init__.py", "perftramp/__main__.py"]
SOURCES = ["perftramp_module.c", "pyversion.h"]
SDIST_FILES = ["pyproject.toml", "build_backend/perftramp_build.py"] + PACKAGE_FILES + SOURCES


class BuildError(Exception):
    """A build that cannot work here, with the reason."""


def _project():
    with open(os.path.join(HERE, "pyproject.toml"), "rb") as f:
        return tomllib.load(f)["project"]


def _pkg_config(*args):
    cmd = shlex.split(os.environ.get("PKG_CONFIG") or "pkg-config") + list(args) + ["perftramp"]
    try:
        return subprocess.run(cmd, check=True, capture_output=True, text=True).stdout.strip()
    except FileNotFoundError:
        raise BuildError("pkg-config is not installed: it finds the installed libperftramp") from None
    except subprocess.CalledProcessError as e:
        why = (e.stderr.strip().splitlines() or ["exit %d" % e.returncode])[-1]
        raise BuildError("pkg-config cannot find libperftramp (%s): install perftramp first "
                         "(./configure && make && make install), or point PKG_CONFIG_PATH at the "
                         "directory holding perftramp.pc" % why) from None


def _check_interpreter():
    v = sys.version_info[:2]
    if sys.implementation.name != "cpython" or not (3, 11) <= v <= (3, 13):
        raise BuildError("perftramp's module supports CPython 3.11, 3.12 and 3.13; this is %s %d.%d"
                         % (sys.implementation.name, *v))
    if sysconfig.get_config_var("Py_GIL_DISABLED"):
        raise BuildError("perftramp's module needs the GIL: free-threaded builds are not supported")
    include = sysconfig.get_paths()["include"]
    if not os.path.exists(os.path.join(include, "internal", "pycore_frame.h")):
        raise BuildError("%s/internal/pycore_frame.h is missing: the module needs CPython's internal "
                         "headers (python3.%d-dev, or a from-source or pyenv build)" % (include, v[1]))
    return include


def _version():
    return _pkg_config("--modversion")


def _tag():
    impl = "cp%d%d" % sys.version_info[:2]
    plat = sysconfig.get_platform().replace("-", "_").replace(".", "_")
    return "%s-%s-%s" % (impl, impl, plat)


def _metadata(version):
    p = _project()
    return ("Metadata-Version: 2.1\nName: %s\nVersion: %s\nSummary: %s\nLicense: %s\n"
            "Requires-Python: %s\n" % (p["name"], version, p.get("description", ""),
                                       p.get("license", {}).get("text", ""), p.get("requires-python", "")))


def _compile(include, out):
    cc = shlex.split(os.environ.get("CC") or sysconfig.get_config_var("CC") or "cc")
    cflags = shlex.split(_pkg_config("--cflags"))
    libs = shlex.split(_pkg_config("--libs"))
    rpaths = ["-Wl,-rpath," + a[2:] for a in libs if a.startswith("-L")]
    cmd = (cc + ["-shared", "-fPIC", "-O2", "-g", "-fno-omit-frame-pointer", "-Wall", "-Wextra",
                 "-isystem", include] + cflags + shlex.split(os.environ.get("CFLAGS", ""))
           + [os.path.join(HERE, "perftramp_module.c"), "-o", out]
           + shlex.split(os.environ.get("LDFLAGS", "")) + libs + rpaths)
    print("perftramp_build:", " ".join(shlex.quote(c) for c in cmd), flush=True)
    r = subprocess.run(cmd, capture_output=True, text=True)
    sys.stdout.write(r.stdout + r.stderr)
    if r.returncode != 0:
        raise BuildError("compiling perftramp_module.c failed (exit %d): %s"
                         % (r.returncode, (r.stderr.strip().splitlines() or ["?"])[-1]))


def _write_dist_info(directory, version):
    name = "perftramp-%s.dist-info" % version
    os.makedirs(os.path.join(directory, name), exist_ok=True)
    with open(os.path.join(directory, name, "METADATA"), "w") as f:
        f.write(_metadata(version))
    return name


# ---- PEP 517 hooks -------------------------------------------------------

def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    _check_interpreter()
    return _write_dist_info(metadata_directory, _version())


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    include = _check_interpreter()
    version = _version()
    tag = _tag()
    suffix = sysconfig.get_config_var("EXT_SUFFIX")
    with tempfile.TemporaryDirectory() as tmp:
        module = os.path.join(tmp, "_perftramp" + suffix)
        _compile(include, module)
        dist_info = "perftramp-%s.dist-info" % version
        files = [(p, open(os.path.join(HERE, p), "rb").read()) for p in PACKAGE_FILES]
        files.append(("perftramp/_perftramp" + suffix, open(module, "rb").read()))
        files.append((dist_info + "/METADATA", _metadata(version).encode()))
        files.append((dist_info + "/WHEEL", ("Wheel-Version: 1.0\nGenerator: perftramp_build\n"
                                             "Root-Is-Purelib: false\nTag: %s\n" % tag).encode()))
        record = io.StringIO()
        for path, data in files:
            digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
            record.write("%s,sha256=%s,%d\n" % (path, digest, len(data)))
        record.write("%s/RECORD,,\n" % dist_info)
        files.append((dist_info + "/RECORD", record.getvalue().encode()))
        wheel = "perftramp-%s-%s.whl" % (version, tag)
        with zipfile.ZipFile(os.path.join(wheel_directory, wheel), "w", zipfile.ZIP_DEFLATED) as z:
            for path, data in files:
                info = zipfile.ZipInfo(path, date_time=(1980, 1, 1, 0, 0, 0))
                info.external_attr = (0o755 if path.endswith(suffix) else 0o644) << 16
                info.compress_type = zipfile.ZIP_DEFLATED
                z.writestr(info, data)
    return wheel


def build_sdist(sdist_directory, config_settings=None):
    version = _version()
    base = "perftramp-%s" % version
    name = base + ".tar.gz"
    with tarfile.open(os.path.join(sdist_directory, name), "w:gz") as tar:
        for path in SDIST_FILES:
            tar.add(os.path.join(HERE, path), arcname=base + "/" + path)
        info = tarfile.TarInfo(base + "/PKG-INFO")
        data = _metadata(version).encode()
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    return name
