"""Quorum settings. Everything comes from the environment (django-environ) with safe defaults.

Development defaults (SQLite file, DEBUG on, a throwaway SECRET_KEY, Celery tasks run in-process)
apply only when QUORUM_ENV=development or test, which the Makefile sets for `make demo` and
`make test`. Anywhere else DEBUG is off, SECRET_KEY must be set, and so must CELERY_BROKER_URL
(or QUORUM_TASKS_INLINE=true, on purpose).
"""
from datetime import timedelta
from pathlib import Path

import environ
from csp.constants import NONE, SELF
from django.core.exceptions import ImproperlyConfigured

from annotation.speech import asr as speech_asr
from annotation.speech import tts as speech_tts

BASE_DIR = Path(__file__).resolve().parent.parent


class _Env(environ.Env):
    """django-environ, whose casts fail with a bare ValueError naming neither the variable nor its
    value (`invalid literal for int() with base 10: 'sixty'`): a value that does not parse stops
    start-up with ImproperlyConfigured saying which variable it is and what it must be instead."""

    def get_value(self, var, cast=None, default=environ.Env.NOTSET, parse_default=False):
        try:
            return super().get_value(var, cast=cast, default=default, parse_default=parse_default)
        except ValueError as exc:
            kind = getattr(cast, "__name__", "a valid value")
            expected = {"int": "a whole number", "float": "a number"}.get(kind, kind)
            raise ImproperlyConfigured(f"{var}={self.ENVIRON.get(var, '')!r} is not {expected}") from exc

    # django-environ takes any value outside its few true spellings for false, so a typo
    # (QUORUM_BEHIND_TLS_PROXY=ture, DEBUG=maybe) silently turned a switch off.
    BOOLEAN_SPELLINGS = {
        **dict.fromkeys(("true", "1", "yes", "on"), True), **dict.fromkeys(("false", "0", "no", "off"), False),
    }

    def bool(self, var, default=environ.Env.NOTSET):
        """A switch: true/false, 1/0, yes/no or on/off in any case; anything else (empty too) stops start-up."""
        if var not in self.ENVIRON:
            return super().bool(var, default=default)  # the default, or django-environ's "not set" error
        value = self.ENVIRON[var]
        try:
            return self.BOOLEAN_SPELLINGS[value.strip().lower()]
        except KeyError:
            raise ImproperlyConfigured(
                f"{var}={value!r} is not true or false: write true/false, 1/0, yes/no or on/off (any case)"
            ) from None

    def db(self, var="DATABASE_URL", default=environ.Env.NOTSET, engine=None):
        config = super().db(var, default=default, engine=engine)
        if "ENGINE" not in config:  # django-environ names no engine for a URL it cannot read
            raise ImproperlyConfigured(
                f"{var} is not a database URL Quorum can read: write it as postgres://USER:PASSWORD@HOST:5432/NAME "
                "(or sqlite:////absolute/path/quorum.sqlite3); the value is not repeated here, as it may hold a password"
            )
        return config


env = _Env()

QUORUM_ENV = env.str("QUORUM_ENV", default="production")
DEVELOPMENT = QUORUM_ENV in ("development", "test")

DEBUG = env.bool("DEBUG", default=DEVELOPMENT)
SECRET_KEY = env.str("SECRET_KEY", default="")
if not SECRET_KEY:
    if not DEVELOPMENT:
        raise ImproperlyConfigured("SECRET_KEY must be set outside development (QUORUM_ENV=development).")
    SECRET_KEY = "development-only-not-secret"  # noqa: S105 - only reachable with QUORUM_ENV=development

ALLOWED_HOSTS = env.list("ALLOWED_HOSTS", default=["127.0.0.1", "localhost", "testserver"] if DEVELOPMENT else [])
CSRF_TRUSTED_ORIGINS = env.list("CSRF_TRUSTED_ORIGINS", default=[])
# A refused form gets the site's page saying what to do (templates/403_csrf.html), an /api/ request JSON.
CSRF_FAILURE_VIEW = "quorum.error_pages.csrf_failure"
# A URL in ALLOWED_HOSTS (https://quorum.example.org) matches no Host header: every request was a 400.
if any("/" in host for host in ALLOWED_HOSTS):
    raise ImproperlyConfigured(
        f"ALLOWED_HOSTS lists host names, not URLs: write quorum.example.org, not {next(h for h in ALLOWED_HOSTS if '/' in h)!r} "
        "(the full origin, https://quorum.example.org, goes in CSRF_TRUSTED_ORIGINS when one is needed)"
    )

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "rest_framework.authtoken",
    "drf_spectacular",
    "drf_spectacular_sidecar",  # Swagger UI served from our static files, not a CDN
    "axes",  # brute-force protection of every password check (see AXES_* below)
    "annotation",
    "hits",
    "evaluation",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "csp.middleware.CSPMiddleware",  # CONTENT_SECURITY_POLICY below, on every response
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "quorum.slashes.CommonMiddleware",  # Django's, answering a missing trailing slash with a 308 that keeps a POST
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "hits.web.framing.ProviderFramingMiddleware",  # worker pages may be framed by MTurk/Prolific only
    "axes.middleware.AxesMiddleware",  # answers a locked-out login with quorum.lockout's page (last)
]

ROOT_URLCONF = "quorum.urls"
WSGI_APPLICATION = "quorum.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
            # `decimals` and `p_value`: every page writes figures by the downloads' rule.
            "builtins": ["quorum.template_numbers"],
        },
    },
]

VAR_DIR = Path(env.str("QUORUM_VAR_DIR", default=str(BASE_DIR / "var")))
DATABASES = {"default": env.db("DATABASE_URL", default=f"sqlite:///{VAR_DIR / 'quorum.sqlite3'}")}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    Path(DATABASES["default"]["NAME"]).parent.mkdir(parents=True, exist_ok=True)
    # WAL lets the simulated annotators read while a submission writes.
    DATABASES["default"].setdefault("OPTIONS", {})
    DATABASES["default"]["OPTIONS"].setdefault("init_command", "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;")
    DATABASES["default"]["OPTIONS"].setdefault("timeout", 30)
    DATABASES["default"]["OPTIONS"].setdefault("transaction_mode", "IMMEDIATE")
DATABASES["default"]["ATOMIC_REQUESTS"] = False
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
]
LOGIN_URL = "login"

# Brute-force protection (django-axes): every password check — the login page, the API token
# (POST /api/token/) and the admin's login — counts failures per account and per address (either
# locks); after QUORUM_LOGIN_FAILURE_LIMIT failures that account or address is refused for
# QUORUM_LOGIN_COOLOFF_MINUTES with status 429 and a message saying when to try again
# (quorum/lockout.py). A successful login clears the account's count. Failures are database rows,
# shared by every web process.
AUTHENTICATION_BACKENDS = ["quorum.lockout.RateLimitedBackend", "django.contrib.auth.backends.ModelBackend"]
AXES_FAILURE_LIMIT = env.int("QUORUM_LOGIN_FAILURE_LIMIT", default=10)
AXES_COOLOFF_TIME = timedelta(minutes=env.int("QUORUM_LOGIN_COOLOFF_MINUTES", default=15))
AXES_LOCKOUT_PARAMETERS = ["username", "ip_address"]
AXES_RESET_ON_SUCCESS = True
AXES_LOCKOUT_CALLABLE = "quorum.lockout.lockout_response"
AXES_VERBOSE = False
LOGIN_REDIRECT_URL = "home"
LOGOUT_REDIRECT_URL = "login"

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
# Quorum's pages and messages are English and it has no translations: Django's translation machinery
# off, as its docs advise for a site without them. It was asked for the active language on every
# reverse() and template variable of every page (issue 26).
USE_I18N = False
USE_TZ = True

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = Path(env.str("STATIC_ROOT", default=str(VAR_DIR / "staticfiles")))
# In development WhiteNoise serves straight from the app and project static folders (no collectstatic).
WHITENOISE_USE_FINDERS = DEBUG
WHITENOISE_AUTOREFRESH = DEBUG
MEDIA_ROOT = Path(env.str("MEDIA_ROOT", default=str(VAR_DIR / "media")))
# Spoken readings' audio (issue 14) goes to STORAGES["audio"]: local files under MEDIA_ROOT/readings by
# default, or an S3-compatible bucket through django-storages when QUORUM_AUDIO_S3_BUCKET is set.
# Bucket credentials come from boto3's standard chain (environment, profile, instance role), never
# from here. Audio is never served from a public URL: the reading views (organizer_views.reading_audio,
# views.work_reading_audio for voters) check who asks and stream it from the storage.
QUORUM_AUDIO_S3_BUCKET = env.str("QUORUM_AUDIO_S3_BUCKET", default="")  # a bucket name turns the S3 storage on
QUORUM_AUDIO_S3_ENDPOINT_URL = env.str("QUORUM_AUDIO_S3_ENDPOINT_URL", default="")  # MinIO, Ceph, R2...; empty: AWS
QUORUM_AUDIO_S3_REGION = env.str("QUORUM_AUDIO_S3_REGION", default="")  # the bucket's region, if the service needs one
QUORUM_AUDIO_S3_PREFIX = env.str("QUORUM_AUDIO_S3_PREFIX", default="quorum-audio")  # key prefix inside the bucket
if QUORUM_AUDIO_S3_BUCKET:
    _AUDIO_STORAGE = {
        "BACKEND": "storages.backends.s3.S3Storage",
        "OPTIONS": {
            "bucket_name": QUORUM_AUDIO_S3_BUCKET,
            "endpoint_url": QUORUM_AUDIO_S3_ENDPOINT_URL or None,
            "region_name": QUORUM_AUDIO_S3_REGION or None,
            "location": QUORUM_AUDIO_S3_PREFIX,
            "default_acl": "private",
            "file_overwrite": False,
        },
    }
else:
    _AUDIO_STORAGE = {
        # No location: FileSystemStorage follows MEDIA_ROOT (readings go under MEDIA_ROOT/readings/).
        "BACKEND": "django.core.files.storage.FileSystemStorage",
    }
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    # Django's storage with each file's URL worked out once per process (quorum/static_files.py).
    "staticfiles": {"BACKEND": "quorum.static_files.StaticFilesStorage"},
    "audio": _AUDIO_STORAGE,
}
# Uploaded corpora can be large; they are streamed to disk, never held in memory.
FILE_UPLOAD_MAX_MEMORY_SIZE = 2 * 1024 * 1024
DATA_UPLOAD_MAX_MEMORY_SIZE = 10 * 1024 * 1024

SESSION_COOKIE_SECURE = not DEBUG
CSRF_COOKIE_SECURE = not DEBUG
SECURE_CONTENT_TYPE_NOSNIFF = True
# HTTPS in production: usually a proxy in front (nginx, a load balancer) ends TLS. Trusting its
# X-Forwarded-Proto is only safe when that proxy sets the header on every request, so it is opt-in.
if env.bool("QUORUM_BEHIND_TLS_PROXY", default=False):
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
SECURE_SSL_REDIRECT = env.bool("SECURE_SSL_REDIRECT", default=False)  # or let the proxy redirect
SECURE_HSTS_SECONDS = env.int("SECURE_HSTS_SECONDS", default=0)  # e.g. 31536000 once HTTPS is the only way in
SECURE_HSTS_INCLUDE_SUBDOMAINS = env.bool("SECURE_HSTS_INCLUDE_SUBDOMAINS", default=False)  # the domain's decisions
SECURE_HSTS_PRELOAD = env.bool("SECURE_HSTS_PRELOAD", default=False)
X_FRAME_OPTIONS = "DENY"
# Pages show what crowd workers wrote to organizers who can pay and reject them: scripts run only
# from Quorum's own files (no inline script, no eval), whatever a page might one day render.
# Styles may be inline (the API docs' and DRF's pages have style attributes; a style cannot act).
# No form-action: a submit redirects to the crowd's own site (Prolific's completion page, MTurk's
# externalSubmit), which Chromium checks against form-action. Worker pages widen frame-ancestors to
# the providers' origins (hits.web.framing); every other page is framed by no one.
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": [SELF],
        "script-src": [SELF],
        "style-src": [SELF, "'unsafe-inline'"],
        "img-src": [SELF, "data:"],
        "media-src": [SELF, "blob:"],  # a spoken reading's take is played back before it is sent
        "connect-src": [SELF],
        "object-src": [NONE],
        "base-uri": [SELF],
        "frame-ancestors": [NONE],
    },
}

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "quorum.api.authentication.TokenAuthentication",  # DRF's, also as `Authorization: Bearer <key>`
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_PARSER_CLASSES": [
        "rest_framework.parsers.JSONParser",
        "rest_framework.parsers.FormParser",
        "quorum.api.parsers.StrictMultiPartParser",  # a multipart body with no part is a 400
    ],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "DEFAULT_PAGINATION_CLASS": "quorum.api.pagination.BoundedLimitOffsetPagination",  # limit and offset clamped
    "PAGE_SIZE": 100,
}
SPECTACULAR_SETTINGS = {
    "TITLE": "Quorum API",
    "DESCRIPTION": "Import corpora, create and launch annotation jobs, follow progress, fetch exports.",
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",  # drf-spectacular's default
        "quorum.api.pagination.document_refused_pages",  # a bad limit or offset is a 400
        "quorum.api.query.document_refused_query_parameters",  # so is a query parameter an endpoint does not take
        "quorum.api.uploads_schema.declare_uploads_binary",  # file fields of multipart bodies are files
    ],
    # Who may read /api/schema/ and /api/docs/: QUORUM_API_SCHEMA_PUBLIC below, read per request.
    "SERVE_PERMISSIONS": ["quorum.api.permissions.SchemaReaders"],
    # Choice sets that share a field name (`state`, `status`) are each named, so none gets a hashed name.
    "ENUM_NAME_OVERRIDES": {"AdaptivePairStateEnum": "evaluation.api.serializers.PAIR_STATES", "StateEnum": "annotation.models.Job.State",
                            "ResponseStatusEnum": "annotation.models.Response.Status",
                            "AttemptStatusEnum": "annotation.models.LatestAttempt.Status",
                            "StatusEnum": "annotation.models.RunStatus"},  # the runs' status keeps the name it had alone
}
# The API's schema and its docs page: public (the default; the schema names operations and fields,
# no data) or, with false, for logged-in organizers only (401/403 for anyone else).
QUORUM_API_SCHEMA_PUBLIC = env.bool("QUORUM_API_SCHEMA_PUBLIC", default=True)

# Celery: Redis in production. Tasks run in-process (eagerly, inside the request that queued
# them) only in development and tests, or when QUORUM_TASKS_INLINE=true says so on purpose.
# Anywhere else a missing broker is refused here, at settings load, rather than by a system
# check: gunicorn and `celery worker`/`beat` never run Django's system checks, and a web server
# that silently imports corpora inside requests (or a worker listening on an in-memory queue
# nobody writes to) is the failure this refusal exists to prevent. SECRET_KEY is refused the
# same way above.
CELERY_BROKER_URL = env.str("CELERY_BROKER_URL", default="")  # redis://host:6379/0; empty: no broker
if CELERY_BROKER_URL and "://" not in CELERY_BROKER_URL:
    # Celery would read a URL without a scheme (redis//host) as the name of an AMQP host and retry forever.
    raise ImproperlyConfigured(
        "CELERY_BROKER_URL is not a broker URL: write it as redis://HOST:6379/DB, e.g. redis://127.0.0.1:6379/0 "
        "(the value is not repeated here, as it may hold a password)"
    )
QUORUM_TASKS_INLINE = env.bool("QUORUM_TASKS_INLINE", default=False)  # true: run tasks in the web process, no worker
# true (`make serve`, `make demo`): with no CELERY_BROKER_URL, the web process hands background
# work to a worker process (`python -m quorum.local_worker`) through a broker in files under
# QUORUM_VAR_DIR/broker (kombu's filesystem transport: nothing to install or run besides the
# worker), so a page that starts an export, an import or a planner run answers at once.
QUORUM_LOCAL_WORKER = env.bool("QUORUM_LOCAL_WORKER", default=False)
CELERY_BROKER_TRANSPORT_OPTIONS: dict = {}
# The filesystem transport has no host, yet kombu warns "No hostname was supplied" on every
# connection whose URL names none: the URL names localhost, which the transport ignores.
LOCAL_BROKER_URL = "filesystem://localhost/"
if (QUORUM_LOCAL_WORKER and not CELERY_BROKER_URL) or CELERY_BROKER_URL == "filesystem://":
    CELERY_BROKER_URL = LOCAL_BROKER_URL
if CELERY_BROKER_URL == LOCAL_BROKER_URL:
    # One folder is both the queue the web process writes and the one the worker reads.
    _broker_dir = VAR_DIR / "broker"
    for _folder in ("queue", "control"):
        (_broker_dir / _folder).mkdir(parents=True, exist_ok=True)
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "data_folder_in": str(_broker_dir / "queue"), "data_folder_out": str(_broker_dir / "queue"),
        "control_folder": str(_broker_dir / "control"),
    }
if CELERY_BROKER_URL.startswith("memory://"):
    CELERY_BROKER_URL = ""  # an in-process queue reaches no worker: it is no broker at all
if not CELERY_BROKER_URL and not (DEVELOPMENT or QUORUM_TASKS_INLINE):
    raise ImproperlyConfigured(
        f"No Celery broker: QUORUM_ENV={QUORUM_ENV} needs CELERY_BROKER_URL, e.g. "
        "CELERY_BROKER_URL=redis://127.0.0.1:6379/0, and a worker and beat "
        "(celery -A quorum worker; celery -A quorum beat) to run imports, exports, crowd calls and the "
        "periodic sweeps. To run tasks inside the web process instead (small installations; no periodic "
        "sweeps run then), set QUORUM_TASKS_INLINE=true on purpose. In development set QUORUM_ENV=development."
    )
CELERY_TASK_ALWAYS_EAGER = QUORUM_TASKS_INLINE or not CELERY_BROKER_URL
CELERY_BROKER_URL = CELERY_BROKER_URL or "memory://localhost/"  # unused while eager; Celery wants a URL
CELERY_RESULT_BACKEND = env.str("CELERY_RESULT_BACKEND", default="") or None
CELERY_TASK_EAGER_PROPAGATES = True
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
# How often beat's sweeps come round: a page whose work the broker refused says by when Quorum tries again.
QUORUM_LOST_WORK_SWEEP_SECONDS = env.int("QUORUM_LOST_WORK_SWEEP_SECONDS", default=300)
QUORUM_FLAG_SWEEP_SECONDS = env.int("QUORUM_FLAG_SWEEP_SECONDS", default=900)
# A re-collection's place is posted this long after it is added, with every other added meanwhile: one
# listing (a Prolific study, an MTurk HIT) for a batch of voted-down items, not one each.
QUORUM_RECOLLECTION_POST_DELAY_SECONDS = env.int("QUORUM_RECOLLECTION_POST_DELAY_SECONDS", default=300)
CELERY_BEAT_SCHEDULE = {
    # Lost background work comes back (annotation/services/sweeps.py): readings without a transcript
    # queued again, imports/exports stuck past QUORUM_RUN_DEADLINE_MINUTES re-queued or failed with
    # the reason, leftover export staging folders removed.
    "sweep-lost-work": {
        "task": "annotation.tasks.sweep_lost_work",
        "schedule": timedelta(seconds=QUORUM_LOST_WORK_SWEEP_SECONDS),
    },
    "release-expired-claims": {
        "task": "annotation.tasks.release_expired_claims",
        "schedule": timedelta(seconds=env.int("QUORUM_CLAIM_SWEEP_SECONDS", default=60)),
    },
    "reconcile-crowd-providers": {
        "task": "hits.tasks.reconcile_all",
        "schedule": timedelta(seconds=env.int("QUORUM_RECONCILE_SECONDS", default=300)),
    },
    # Worker flags (fast, pasted, near-duplicate, straight-lining, low agreement) recorded on the
    # responses of every live job, so reviewers and `flags_reject` see them without a button press.
    # Each run rereads a job's responses; QUORUM_FLAG_SWEEP_SECONDS trades freshness for load.
    # Typing-process logs (annotation/text/typing_log.py) older than QUORUM_TYPING_LOG_RETENTION_DAYS are
    # emptied once a day; the flags already stored from them stay.
    "purge-typing-logs": {
        "task": "annotation.tasks.purge_typing_logs",
        "schedule": timedelta(seconds=env.int("QUORUM_TYPING_LOG_PURGE_SECONDS", default=86400)),
    },
    "sweep-worker-flags": {
        "task": "annotation.tasks.sweep_worker_flags",
        "schedule": timedelta(seconds=QUORUM_FLAG_SWEEP_SECONDS),
    },
    # RADDLE's evaluation service: entries with an endpoint that are top-k by automatic score and
    # were not evaluated within their schedule's window get an interactive campaign (evaluation
    # InteractiveSchedule). Daily by default; the window, not this period, sets how often an entry is evaluated.
    "scheduled-interactive-evaluations": {
        "task": "evaluation.tasks.run_scheduled_interactive_evaluations",
        "schedule": timedelta(seconds=env.int("QUORUM_INTERACTIVE_SCHEDULE_SECONDS", default=86400)),
    },
    # Objective scoring runs (evaluation score_entries) lost like imports and exports above: re-queued or failed with the reason.
    "sweep-objective-scoring": {
        "task": "evaluation.tasks.sweep_objective_scoring",
        "schedule": timedelta(seconds=QUORUM_LOST_WORK_SWEEP_SECONDS),
    },
    # Adaptive campaigns: a look is queued when a rating is recorded; this sweep catches a round
    # whose last change was not a new rating (a response rejected, a claim expiring).
    "sweep-adaptive-campaigns": {
        "task": "evaluation.tasks.sweep_adaptive_campaigns",
        "schedule": timedelta(seconds=env.int("QUORUM_ADAPTIVE_SWEEP_SECONDS", default=300)),
    },
    # Pairwise ranking reports (evaluation PairwiseReport) lost like the runs below: re-queued or failed with the reason.
    "sweep-pairwise-reports": {
        "task": "evaluation.tasks.sweep_pairwise_reports",
        "schedule": timedelta(seconds=QUORUM_LOST_WORK_SWEEP_SECONDS),
    },
    # Planner runs and human-evaluation imports stuck past QUORUM_RUN_DEADLINE_MINUTES, as sweep-lost-work does for imports and exports.
    "sweep-campaign-runs": {
        "task": "evaluation.tasks.sweep_campaign_runs",
        "schedule": timedelta(seconds=QUORUM_LOST_WORK_SWEEP_SECONDS),
    },
    # Campaign results computations the broker refused, or whose worker was lost (failed with the reason), queued again.
    "sweep-campaign-results": {
        "task": "evaluation.tasks.sweep_campaign_results",
        "schedule": timedelta(seconds=QUORUM_LOST_WORK_SWEEP_SECONDS),
    },
    # FED results computations the broker refused, or whose worker was lost, queued again.
    "sweep-fed-results": {
        "task": "evaluation.tasks.sweep_fed_results_runs",
        "schedule": timedelta(seconds=QUORUM_LOST_WORK_SWEEP_SECONDS),
    },
}

# Beat's record of when each entry last ran lives in QUORUM_VAR_DIR with the rest of Quorum's state
# (as `make serve`'s worker keeps it), not in the folder beat was started from: by the README's
# commands that is the checkout, where its files showed as untracked and a read-only one stopped beat.
VAR_DIR.mkdir(parents=True, exist_ok=True)
CELERY_BEAT_SCHEDULE_FILENAME = str(VAR_DIR / "celerybeat-schedule")

# Quorum's own settings.
QUORUM_VERSION = "0.1.0"  # written into exports' manifests, so a data set says which code made it
# How long a response keeps its typing-process log (timing of edits and focus changes per text
# field; workers are told). 0 keeps logs until the response is deleted. 180 days covers a
# collection and its review; the stored flags and their evidence outlive the log.
QUORUM_TYPING_LOG_RETENTION_DAYS = env.int("QUORUM_TYPING_LOG_RETENTION_DAYS", default=180)
# Per-person limits on expensive requests (quorum/limits.py), each a count per minute, 0 for no
# limit; past one the request is refused with 429 and a message saying when to try again. Held
# across web processes when CACHE_URL is a shared cache (Redis), per process otherwise.
# Submissions carrying recordings, per worker (each is checked, stored and transcribed):
QUORUM_LIMIT_RECORDINGS_PER_MINUTE = env.int("QUORUM_LIMIT_RECORDINGS_PER_MINUTE", default=20)
# Chat messages (open, say, end) per worker: each one calls a submitted dialog system:
QUORUM_LIMIT_CHAT_MESSAGES_PER_MINUTE = env.int("QUORUM_LIMIT_CHAT_MESSAGES_PER_MINUTE", default=40)
# Contract checks of dialog systems (registering, checking again, changing a URL), per organizer:
QUORUM_LIMIT_SYSTEM_CHECKS_PER_MINUTE = env.int("QUORUM_LIMIT_SYSTEM_CHECKS_PER_MINUTE", default=6)
QUORUM_EXPORT_DIR = Path(env.str("QUORUM_EXPORT_DIR", default=str(VAR_DIR / "exports")))
QUORUM_IMPORT_DIR = Path(env.str("QUORUM_IMPORT_DIR", default=str(VAR_DIR / "imports")))
# Interactive evaluation (docs/system-contract.md): how long one request to a submitted dialog
# system may take before the turn is recorded as failed and the worker sees a polite fallback.
# The deadline covers the whole call (connecting, sending, the whole reply), not each read.
QUORUM_SYSTEM_TURN_TIMEOUT_SECONDS = env.float("QUORUM_SYSTEM_TURN_TIMEOUT_SECONDS", default=10.0)
# The largest reply Quorum reads from a system, in bytes, both as sent and once a gzip/deflate body
# is expanded; a bigger reply is a failed turn.
QUORUM_SYSTEM_MAX_REPLY_BYTES = env.int("QUORUM_SYSTEM_MAX_REPLY_BYTES", default=64 * 1024)
# How many calls to one system may be under way at once (across web processes when CACHE_URL is a
# shared cache such as Redis; per process with the default local-memory cache), and to all systems
# together. A turn past either limit is not sent: the worker is asked to try again in a moment (it
# does not count toward pausing). Keep the total below the number of web workers, so slow systems
# can never hold every worker.
# Where Quorum may connect when it calls a dialog system (evaluation/interactive/systems/addresses.py).
# Loopback, link-local (cloud metadata), private and reserved addresses are refused, at registration
# and at every call after DNS resolution; list here, comma-separated, the host names (e.g. lab-gpu-1)
# and addresses or ranges (e.g. 127.0.0.1, 10.20.0.0/16) of a lab's own network to allow. The test
# suite and the demo, whose systems run on 127.0.0.1, set 127.0.0.1 explicitly.
QUORUM_SYSTEM_ALLOWED_HOSTS = env.list("QUORUM_SYSTEM_ALLOWED_HOSTS", default=[])
QUORUM_SYSTEM_MAX_CONCURRENT_CALLS = env.int("QUORUM_SYSTEM_MAX_CONCURRENT_CALLS", default=2)
QUORUM_SYSTEMS_MAX_CONCURRENT_CALLS = env.int("QUORUM_SYSTEMS_MAX_CONCURRENT_CALLS", default=3)
# A system that keeps failing (timeouts, errors, replies that break the contract) is paused: no new
# chats are assigned to it, workers already in a chat with it may end without ratings, and an
# organizer resumes it on the systems page. It is paused after this many failed turns in a row
# (0: never on this rule)...
QUORUM_SYSTEM_PAUSE_CONSECUTIVE_FAILURES = env.int("QUORUM_SYSTEM_PAUSE_CONSECUTIVE_FAILURES", default=5)
# ...or when at least this share (0-1) of its last QUORUM_SYSTEM_PAUSE_WINDOW_TURNS turns failed
# (window 0: never on this rule). Only turns since the last resume count.
QUORUM_SYSTEM_PAUSE_FAILURE_RATE = env.float("QUORUM_SYSTEM_PAUSE_FAILURE_RATE", default=0.5)
QUORUM_SYSTEM_PAUSE_WINDOW_TURNS = env.int("QUORUM_SYSTEM_PAUSE_WINDOW_TURNS", default=20)
# The offensive-word filter run over transcripts and static responses before a FED questionnaire
# (evaluation/interactive/offensive.py): a list of words/phrases, or the path of a UTF-8 file with one per line
# ('#' comments). None: Quorum's small default English list. Matches are whole words, any case; a
# flagged dialog waits in a review queue where an organizer keeps or drops it.
QUORUM_OFFENSIVE_WORDS = env.str("QUORUM_OFFENSIVE_WORDS_FILE", default="") or None

# Speech (annotation/speech/): the recogniser that transcribes spoken readings and simulated speech.
QUORUM_ASR_BACKEND = env.str("QUORUM_ASR_BACKEND", default="pocketsphinx")  # pocketsphinx (offline, English), whisper or http
QUORUM_ASR_WHISPER_DIR = env.str("QUORUM_ASR_WHISPER_DIR", default="")  # a faster-whisper model directory (backend whisper); nothing is downloaded
# A transcription task is stopped after this many seconds (Celery's hard time limit; a soft limit
# 10 s earlier lets it record the failure). Recordings are bounded (annotation/speech/audio.py:
# at most 48 kHz, 2 channels, 120 s), so a normal one takes a few seconds.
# A reading with neither a transcript nor a recorded failure this many minutes after it was stored
# is queued again by the lost-work sweep (its task was lost, or the broker was down).
QUORUM_TRANSCRIBE_GRACE_MINUTES = env.int("QUORUM_TRANSCRIBE_GRACE_MINUTES", default=10)
# An import or export still pending this many minutes after it was asked for is queued again; one
# still running this long after it started is failed with the reason (its worker was lost).
QUORUM_RUN_DEADLINE_MINUTES = env.int("QUORUM_RUN_DEADLINE_MINUTES", default=120)
# Leaderboards mark an adjacent pair (and rank 1) whose order the removal of fewer than this share
# of the leaderboard's ratings or votes reverses (evaluation/stats/fragility.py), e.g. 0.01: fewer
# than 1 in 100. Between 0 and 1; read when a campaign's results or a ranking are computed.
QUORUM_FRAGILITY_MARK_SHARE = env.float("QUORUM_FRAGILITY_MARK_SHARE", default=0.01)
if not 0 <= QUORUM_FRAGILITY_MARK_SHARE <= 1:
    raise ImproperlyConfigured(f"QUORUM_FRAGILITY_MARK_SHARE must lie between 0 and 1 (a share of the ratings); got {QUORUM_FRAGILITY_MARK_SHARE}")
# A pairwise job's stored ranking report (bootstrap, fragility, style fit) is computed again this
# many seconds after a vote starts or stops counting; votes counted meanwhile join that computation,
# so a busy job is ranked about once per period instead of once per vote. 0: at once.
QUORUM_PAIRWISE_REPORT_DELAY_SECONDS = env.float("QUORUM_PAIRWISE_REPORT_DELAY_SECONDS", default=30.0)
if QUORUM_PAIRWISE_REPORT_DELAY_SECONDS < 0:
    raise ImproperlyConfigured(f"QUORUM_PAIRWISE_REPORT_DELAY_SECONDS must be 0 or more (seconds); got {QUORUM_PAIRWISE_REPORT_DELAY_SECONDS}")
QUORUM_ASR_TIME_LIMIT_SECONDS = env.int("QUORUM_ASR_TIME_LIMIT_SECONDS", default=120)
# A worker process whose resident memory passes this many kilobytes after a task is replaced by a
# fresh one (Celery's worker_max_memory_per_child), so one costly task cannot keep memory held.
CELERY_WORKER_MAX_MEMORY_PER_CHILD = env.int("QUORUM_WORKER_MAX_MEMORY_KB", default=1_500_000)
QUORUM_ASR_HTTP_URL = env.str("QUORUM_ASR_HTTP_URL", default="")  # endpoint taking a POSTed WAV, answering {"text", "confidence"} (backend http)
QUORUM_ASR_HTTP_TIMEOUT = env.float("QUORUM_ASR_HTTP_TIMEOUT", default=30.0)  # seconds before an http transcription counts as failed
QUORUM_ASR_CACHE_DIR = env.str("QUORUM_ASR_CACHE_DIR", default="")  # where adapted language models are cached; empty: the system temp dir
QUORUM_TTS_ENGINE = env.str("QUORUM_TTS_ENGINE", default="flite")  # espeak-ng or flite (Debian packages), for simulated speech
# A name the speech package does not know was accepted here and failed only when a recording was
# transcribed or speech simulated; refused now, at start-up, by the speech package's own registries
# (pure Python, no Django: safe to read while settings load).
for _variable, _name, _known in (
    ("QUORUM_ASR_BACKEND", QUORUM_ASR_BACKEND, speech_asr.BACKENDS), ("QUORUM_TTS_ENGINE", QUORUM_TTS_ENGINE, speech_tts.ENGINES),
):
    if _name not in _known:
        raise ImproperlyConfigured(f"{_variable}={_name!r} is not one Quorum knows: {', '.join(_known)}")
# Objective scoring (evaluation score_entries): METEOR needs the WordNet 3.0 database, which no PyPI
# package ships; this folder holds it (Debian's wordnet-base). Missing: METEOR is taken from score.csv.
QUORUM_WORDNET_DIR = env.str("QUORUM_WORDNET_DIR", default="/usr/share/wordnet")

# Crowd providers (hits/). Credentials never live here: boto3's standard chain for MTurk, and the
# environment variable named by QUORUM_PROLIFIC_TOKEN_ENV for Prolific.
QUORUM_PUBLIC_BASE_URL = env.str("QUORUM_PUBLIC_BASE_URL", default="http://127.0.0.1:8000")  # what providers link to
QUORUM_MTURK_LIVE = env.bool("QUORUM_MTURK_LIVE", default=False)  # False: the MTurk sandbox; True spends real money
QUORUM_MTURK_ENDPOINT_URL = env.str("QUORUM_MTURK_ENDPOINT_URL", default="")  # an MTurk-compatible endpoint, if any
QUORUM_MTURK_CALLS_PER_SECOND = env.float("QUORUM_MTURK_CALLS_PER_SECOND", default=20)  # client-side rate limit
QUORUM_MTURK_CONCURRENCY = env.int("QUORUM_MTURK_CONCURRENCY", default=8)  # parallel create calls when posting
QUORUM_MTURK_MAX_ATTEMPTS = env.int("QUORUM_MTURK_MAX_ATTEMPTS", default=5)  # botocore retries of throttling/faults
QUORUM_MTURK_OUTER_RETRIES = env.int("QUORUM_MTURK_OUTER_RETRIES", default=3)  # our retries after botocore's
QUORUM_MTURK_BLOCK_QUALIFICATION_ID = env.str("QUORUM_MTURK_BLOCK_QUALIFICATION_ID", default="")  # soft blocks
# Where a worker's turkSubmitTo may point (comma-separated origins); empty: MTurk's own hosts.
# `manage.py rehearse` points it at the local fake.
QUORUM_MTURK_SUBMIT_HOSTS = env.list("QUORUM_MTURK_SUBMIT_HOSTS", default=[])
QUORUM_PROLIFIC_API_URL = env.str("QUORUM_PROLIFIC_API_URL", default="https://api.prolific.com")
# False: Prolific's API (anything but a local fake on this machine) may not publish studies, approve or
# pay bonuses, whatever token is set; True spends real money.
QUORUM_PROLIFIC_LIVE = env.bool("QUORUM_PROLIFIC_LIVE", default=False)
QUORUM_PROLIFIC_TOKEN_ENV = env.str("QUORUM_PROLIFIC_TOKEN_ENV", default="PROLIFIC_TOKEN")
QUORUM_PROLIFIC_FEE_RATE = env.str("QUORUM_PROLIFIC_FEE_RATE", default="0.3334")  # a third rounded up: never under Prolific's
# Where a participant goes after a saved submit, with {code} for the job's completion code; empty:
# Prolific's own completion page. `manage.py rehearse` points it at the local fake.
QUORUM_PROLIFIC_COMPLETE_URL = env.str("QUORUM_PROLIFIC_COMPLETE_URL", default="")
# What a worker whose response was rejected (voted down, failed checks) is told by the settlement;
# empty: Quorum's own wording (hits/services/reconcile.py). Prolific needs at least 100 characters.
QUORUM_REJECTION_MESSAGE = env.str("QUORUM_REJECTION_MESSAGE", default="")
QUORUM_REQUEST_TOKEN_PREFIX = env.str("QUORUM_REQUEST_TOKEN_PREFIX", default="quorum")  # idempotency tokens
QUORUM_RECONCILE_GRACE_SECONDS = env.int("QUORUM_RECONCILE_GRACE_SECONDS", default=300)  # before an intent is repaired
QUORUM_SETTLE_MARGIN_HOURS = env.int("QUORUM_SETTLE_MARGIN_HOURS", default=12)  # settle before auto-approval
QUORUM_EXTRA_FRAME_ORIGINS = env.list("QUORUM_EXTRA_FRAME_ORIGINS", default=[])  # other origins that may frame tasks
# Django's cache: per process by default. With several gunicorn workers set CACHE_URL (e.g.
# redis://127.0.0.1:6379/1) so that what one process forgets (a job's provider, when its crowd
# settings change) is forgotten by all.
CACHES = {"default": env.cache_url("CACHE_URL", default="locmemcache://")}
# Sessions (issue 26): with a cache every process shares (CACHE_URL), a request reads its session
# from the cache and writes go through to the database ("cached_db"), so a work page costs no
# session query. With the per-process default a logout in one worker would not reach the cache of
# another, so sessions are then read from the database alone. Both are Django's stores with the
# database read compiled once per process (quorum/sessions). QUORUM_SESSION_ENGINE overrides both.
_SHARED_CACHE = CACHES["default"]["BACKEND"] not in (
    "django.core.cache.backends.locmem.LocMemCache", "django.core.cache.backends.dummy.DummyCache",
)
SESSION_ENGINE = env.str(
    "QUORUM_SESSION_ENGINE",
    default="quorum.sessions.cached_db" if _SHARED_CACHE else "quorum.sessions.db",
)
# The annotation loop's hottest statements are prepared on the PostgreSQL server once per connection
# (quorum/compiled_queries.py). Turn off behind a pooler in transaction mode, which cannot keep them.
QUORUM_PREPARED_STATEMENTS = env.bool("QUORUM_PREPARED_STATEMENTS", default=True)
QUORUM_JOB_PROVIDER_CACHE_SECONDS = env.int("QUORUM_JOB_PROVIDER_CACHE_SECONDS", default=300)  # claims read a job's provider from the cache
QUORUM_CONFIRM_RETRY_SECONDS = env.int("QUORUM_CONFIRM_RETRY_SECONDS", default=120)  # ask a provider again to confirm an entry
QUORUM_MTURK_CONFIRM_MARGIN_MINUTES = env.int("QUORUM_MTURK_CONFIRM_MARGIN_MINUTES", default=30)  # after an assignment's duration, MTurk's silence refutes it
QUORUM_PROLIFIC_WORKSPACE_ID = env.str("QUORUM_PROLIFIC_WORKSPACE_ID", default="")  # the workspace whose hooks Quorum subscribes to
QUORUM_PROLIFIC_HOOK_SECRET_ENV = env.str("QUORUM_PROLIFIC_HOOK_SECRET_ENV", default="PROLIFIC_HOOK_SECRET")  # variable holding the hooks' signing secret
QUORUM_PROLIFIC_HOOK_MAX_AGE_SECONDS = env.int("QUORUM_PROLIFIC_HOOK_MAX_AGE_SECONDS", default=600)  # older signed hooks are refused as replays

# The root logger's level; a name logging does not know stopped start-up with "Unable to configure
# logger 'django'", which names neither the variable nor the choices.
LOG_LEVEL = env.str("LOG_LEVEL", default="INFO")
if LOG_LEVEL.upper() not in ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"):
    raise ImproperlyConfigured(f"LOG_LEVEL={LOG_LEVEL!r} is not a level: DEBUG, INFO, WARNING, ERROR or CRITICAL")
LOG_LEVEL = LOG_LEVEL.upper()
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s %(message)s"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "root": {"handlers": ["console"], "level": LOG_LEVEL},
    "loggers": {
        # Django's own default configuration gives the "django" logger a console handler of its
        # own (shown when DEBUG is on); its records also reach the root's console here, so every
        # django.* line was printed twice. Cleared: the root's handler prints each record once.
        "django": {"handlers": [], "level": LOG_LEVEL, "propagate": True},
        "django.server": {"level": "WARNING"},
        # The worker's "Task NAME[id] succeeded in 0.4s" lines are INFO: shown at LOG_LEVEL INFO or
        # DEBUG, so an operator sees work finish as well as arrive; quiet at WARNING and above.
        "celery.app.trace": {"level": LOG_LEVEL},
        # django-axes logs four INFO lines per successful login (and the demo's annotators log in
        # through the real pages); its failures and lock-outs are WARNING and stay.
        "axes": {"level": "WARNING"},
    },
}

if QUORUM_ENV == "test":
    # Tests create many users; the default PBKDF2 hasher would dominate their run time.
    PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
