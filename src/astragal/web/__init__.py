"""The web table: shared rooms where a group rolls together, live, with exact odds and a lasting log.

Modules (the only ones in astragal, with the CLI, that do I/O, keep state or read the clock). The
room and its log, apart from HTTP:

``room``          ``Table``: rooms, members, rolling, reading and exporting the log
``roomodds``      its exact odds (in ``oddspool``'s workers) and the Luck panel (``luck``)
``roomtools``     its tools: reveal, seed epochs, keys, members, the fight tracker, turn order
``tabletools``    the tools' pure parts: examples, headlines, sheets checked, fight and turns
``basics``        errors, keys, rate limits, a member, the recording source of faces
``caps``          how much a room, an address or a request may take
``sheet``         characters (named pools and numbers) and macros, and how they expand in a roll
``names``         display names that cannot pass for one another
``fair``          provably fair faces: a committed seed per epoch (``epochs`` checks them)
``chain``         the hash-chained log entry format: canonical JSON, hashing, verification (pure)
``signing``       the table's Ed25519 key

Storage: ``store`` (the interface and ``open_store``), ``sqlite_store`` (default),
``postgres_store`` (several instances), ``store_common``.

HTTP: ``app`` (the FastAPI application: ``create_app``, the page), ``routes`` (the API),
``schemas`` (its bodies), ``live`` (the WebSocket), ``exports``, ``verify_page``; ``server``
(``astragal serve``) and ``verify`` (``astragal verify-log``, reading exports one entry at a time
with ``export_file``).

Needs the ``web`` extra (FastAPI, uvicorn, psycopg); ``chain`` and ``sheet`` need only the standard
library, so an exported log can be verified anywhere astragal is installed.
"""
