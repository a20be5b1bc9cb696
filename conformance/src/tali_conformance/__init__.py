"""The tali conformance kit: certify a server, or check a client, against the protocol.

python -m tali_conformance server ws://HOST:PORT/
python -m tali_conformance client -- node my-adapter.mjs
"""
