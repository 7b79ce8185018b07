# Image of the web server and the Celery workers (docker-compose.yml runs both from it).
# The browser bundle is built in a Node stage when frontend/ exists; nothing is fetched at run time.
FROM node:20-bookworm-slim AS frontend
WORKDIR /src
COPY . .
RUN if [ -f frontend/package.json ]; then \
        cd frontend && npm ci --no-audit --no-fund && npm run build; \
    else mkdir -p frontend/dist; fi

# The C cores (simulator/_speedups.c, _cachesim.c, _v8results.c, built by setuptools from the declarations
# setup.py reads) need a compiler and the Python headers, which the slim image lacks: build them
# here, against the same pinned greenlet, and copy the built modules over.
FROM python:3.11-bookworm AS speedups
WORKDIR /src
COPY requirements/ requirements/
RUN pip install --no-cache-dir "$(grep '^greenlet==' requirements/base.txt)" \
    "$(grep '^setuptools==' requirements/base.txt)"
COPY simulator/ simulator/
RUN python -m simulator.build_speedups --require

FROM python:3.11-slim-bookworm
ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    DJANGO_SETTINGS_MODULE=webapp.settings.production \
    PARASIM_DATA_DIR=/var/lib/parasim
WORKDIR /app
COPY requirements/ requirements/
RUN pip install --no-cache-dir -r requirements/base.txt
COPY . .
COPY --from=frontend /src/frontend/dist frontend/dist
COPY --from=speedups /src/simulator/_*.so simulator/
# collectstatic needs settings to import; this key exists only during the build.
RUN SECRET_KEY=build-only-key-0123456789-0123456789-0123456789-0123456789 \
        python manage.py collectstatic --noinput -v 0 \
    && useradd --system --create-home --uid 1000 parasim \
    && mkdir -p "$PARASIM_DATA_DIR" && chown parasim "$PARASIM_DATA_DIR"
USER parasim
EXPOSE 8000
CMD ["gunicorn", "webapp.wsgi", "-c", "webapp/gunicorn.conf.py"]
