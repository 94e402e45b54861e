"""The bundled OpenWOP reference host: a real implementation the suite validates itself against."""

__all__ = ["__version__"]
__version__ = "0.1.0"
