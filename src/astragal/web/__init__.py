"""The web table: shared rooms where a group rolls together, live, with exact odds and a lasting log.

Modules (the only ones in astragal, with the CLI, that do I/O, keep state or read the clock):

``chain``     the hash-chained log entry format: canonical JSON, hashing, verification (pure)
``sheet``     characters (named pools and numbers) and macros, and how they expand in a roll
``store``     the storage interface and its two backends: SQLite (default) and PostgreSQL
``app``       the FastAPI application: HTTP API, WebSocket, the page
``server``    ``astragal serve``
``verify``    ``astragal verify-log``

Needs the ``web`` extra (FastAPI, uvicorn, psycopg); ``chain`` and ``sheet`` need only the standard
library, so an exported log can be verified anywhere astragal is installed.
"""
