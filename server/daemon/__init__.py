"""The JSON-RPC daemon: transport, options, session and handlers."""
