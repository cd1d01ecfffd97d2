"""Model calls: the one logging client (``client.py``), its providers (openai, replay; rules and extractive live
with their stages), token counting, rate limiting and the Batch API path. Nothing else calls an LLM SDK.

Import from the modules themselves: this package imports nothing, so that the call process
(``call_process.py``), which needs only the provider, starts without the client's and the warehouse's imports.
"""
