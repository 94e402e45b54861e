"""OpenWOP memory conformance harness: a pytest plugin that grades any host over HTTP."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("openwop-memory-conformance")
except PackageNotFoundError:  # running from a source tree that was never installed
    __version__ = "0.0.0+source"
