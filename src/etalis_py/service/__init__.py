"""The engine as a service: ``etalis serve`` (docs/service.md)."""

from .app import Service, ServiceConfig, make_app
from .server import ServeOptions, serve

__all__ = ["ServeOptions", "Service", "ServiceConfig", "make_app", "serve"]
