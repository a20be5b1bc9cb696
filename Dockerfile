# The tali server image: slim Python, the package and nothing else, run as a
# non-root user, listening on every interface inside the container.
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

WORKDIR /app
COPY pyproject.toml README.md ./
COPY server ./server
COPY protocol ./protocol
COPY clients ./clients
# The local project with its uvloop extra (version ranges live in pyproject.toml).
# hadolint ignore=DL3013
RUN pip install --no-cache-dir '.[uvloop]' \
    && useradd --system --uid 10001 --no-create-home tali \
    && mkdir /data && chown 10001 /data

USER 10001
ENV TALI_HOST=0.0.0.0 \
    TALI_CLIENT_DIR=/app/clients/sample_js \
    TALI_DATA_DIR=/data \
    TALI_PORT=8765 \
    TALI_LOG_FORMAT=json
EXPOSE 8765
# The room store (SQLite): mount a volume here so rooms outlive the container.
VOLUME /data

HEALTHCHECK --interval=10s --timeout=3s --start-period=5s --retries=3 \
    CMD ["python", "-c", "import sys, urllib.request; sys.exit(urllib.request.urlopen('http://127.0.0.1:8765/healthz', timeout=2).status != 200)"]

STOPSIGNAL SIGTERM
CMD ["tali-server"]
