"""The web viewer: server-rendered pages over a pool of namespaced controllers."""

from disclosure.faces.viewer.routes import install_viewer

__all__ = ["install_viewer"]
