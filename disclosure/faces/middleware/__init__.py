"""The chat faces: memory around a chat-completion call.

:mod:`~disclosure.faces.middleware.chat` wraps any callable taking OpenAI-style messages (sync,
async, streaming); :mod:`~disclosure.faces.middleware.messages` holds the message helpers it
shares with :mod:`~disclosure.faces.middleware.langchain`, the LangChain retriever and Runnables
(the ``[langchain]`` extra, imported only when asked for).
"""

from disclosure.faces.middleware.chat import (
    OPTIONS_KEY,
    CallOptions,
    DisclosureMiddleware,
    PreparedCall,
    TurnRecord,
)

__all__ = ["OPTIONS_KEY", "CallOptions", "DisclosureMiddleware", "PreparedCall", "TurnRecord"]
