"""OpenWOP memory conformance harness: a pytest plugin that grades any host over HTTP."""

from importlib.metadata import PackageNotFoundError, version

NAME = "openwop-memory-conformance"  # the distribution, the command, and the suite in every report

try:
    __version__ = version(NAME)
except PackageNotFoundError:  # running from a source tree that was never installed
    __version__ = "0.0.0+source"
