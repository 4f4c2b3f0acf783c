"""ChaosLM settings: every value comes from an environment variable with a documented default.

docs/settings.md lists each variable (tests/core/test_docs.py holds the two in agreement).
"""

import ipaddress
import logging
import os
import tempfile
import warnings
from datetime import timedelta
from pathlib import Path
from urllib.parse import urlsplit

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

BASE_DIR = Path(__file__).resolve().parent.parent


def env_str(name: str, default: str) -> str:
    return os.environ.get(name, default)


def env_bool(name: str, default: bool) -> bool:
    raw = os.environ.get(name)
    if raw is None or raw == "":
        return default
    if raw.lower() in {"1", "true", "yes", "on"}:
        return True
    if raw.lower() in {"0", "false", "no", "off"}:
        return False
    raise ImproperlyConfigured(f"{name} must be true or false, not {raw!r}")


def env_number(name: str, default: float, cast: type = float) -> float:
    raw = os.environ.get(name)
    if raw is None or raw == "":
        return default
    try:
        return cast(raw)
    except ValueError:
        raise ImproperlyConfigured(f"{name} must be a number, not {raw!r}") from None


def renamed(old: str, new: str) -> None:
    """Say once, at start, that `old` still works but is now `new` (read as `new`'s default where `new` is unset)."""
    if os.environ.get(old, "") == "":
        return
    message = f"{old} is deprecated: set {new} instead" + (
        f" ({new} is set, so {old} is ignored)." if os.environ.get(new) else "."
    )
    warnings.warn(message, DeprecationWarning, stacklevel=2)
    logging.getLogger("config.settings").warning(message)


DEBUG = env_bool("CHAOSLM_DEBUG", True)
SECRET_KEY = env_str("CHAOSLM_SECRET_KEY", "")
if not SECRET_KEY:
    if not DEBUG:
        raise ImproperlyConfigured("CHAOSLM_SECRET_KEY must be set when CHAOSLM_DEBUG is off")
    # Only ever used on a developer's machine: DEBUG is on and no key was given.
    SECRET_KEY = "chaoslm-insecure-development-key-never-use-in-production"  # noqa: S105

ALLOWED_HOSTS = [h.strip() for h in env_str("CHAOSLM_ALLOWED_HOSTS", "localhost,127.0.0.1,[::1]").split(",")]
CSRF_TRUSTED_ORIGINS = [o.strip() for o in env_str("CHAOSLM_CSRF_TRUSTED_ORIGINS", "").split(",") if o.strip()]

INSTALLED_APPS = [
    "chaoslm.daphne_app.DaphneConfig",  # before staticfiles: its runserver wins
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django_htmx",
    "channels",
    "axes",
    "csp",
    "personas",
    "debates",
    "rooms",
    # The audience's votes: a debate's poll and what every arena's vote shares (above debates, below batches).
    "audience",
    "batches",
    "tournaments",
    "experiments",
    "comparisons",
    # The JSON API (/api/v1/), with django-ninja (not itself an app here: listed, `ninja` and pydantic would be
    # imported by every command).
    "api",
    # A person's own account pages (log in, sign up, spend, API tokens, webhooks): views and templates only.
    "accounts",
]

MIDDLEWARE = [
    # First: /healthz, /readyz and /metrics are answered before the host check and the HTTPS redirect (a
    # Kubernetes probe names the pod's address and speaks plain HTTP); chaoslm/health.py.
    "chaoslm.health.ProbeMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "csp.middleware.CSPMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    # The JSON API's edges (api/edges.py): no CSRF on token calls, JSON bodies only, every error a problem.
    "api.edges.ApiEdges",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    # Last, as django-axes asks: it turns a refused login into the lockout page.
    "axes.middleware.AxesMiddleware",
]

ROOT_URLCONF = "config.urls"
ASGI_APPLICATION = "config.asgi.application"
WSGI_APPLICATION = None

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
                # The navigation's links to each kind of batch (templates/base.html).
                "batches.context_processors.batch_kinds",
            ],
        },
    },
]

DATABASES = {"default": dj_database_url.parse(env_str("DATABASE_URL", f"sqlite:///{BASE_DIR / 'db.sqlite3'}"))}
_SQLITE = DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3"
# Opening a SQLite connection (pragmas, Django's SQL functions) cost 13% of the CPU of a spectator joining
# a live page, redone on every request and socket: keep SQLite's open. A PostgreSQL server's connections
# are a shared budget, so there the default stays one per request.
DATABASES["default"]["CONN_MAX_AGE"] = env_number("CHAOSLM_DB_CONN_MAX_AGE", 600 if _SQLITE else 0, int)
DATABASES["default"]["CONN_HEALTH_CHECKS"] = True
# PostgreSQL only: a pool of at most this many connections per process (psycopg_pool, Django's "pool" option).
# A crowd's pages each hold a connection while they fetch; past the server's max_connections those fetches
# failed, where with a pool they wait their turn (up to CHAOSLM_DB_POOL_TIMEOUT seconds).
CHAOSLM_DB_POOL_SIZE = env_number("CHAOSLM_DB_POOL_SIZE", 0, int)
if CHAOSLM_DB_POOL_SIZE > 0 and not _SQLITE:
    if DATABASES["default"]["CONN_MAX_AGE"]:
        raise ImproperlyConfigured("CHAOSLM_DB_POOL_SIZE needs CHAOSLM_DB_CONN_MAX_AGE=0 (the pool keeps them)")
    DATABASES["default"].setdefault("OPTIONS", {})["pool"] = {
        "min_size": 1,
        "max_size": CHAOSLM_DB_POOL_SIZE,
        "timeout": env_number("CHAOSLM_DB_POOL_TIMEOUT", 30.0),
    }
if _SQLITE:
    # WAL lets readers (page views) proceed while the engine writes events.
    DATABASES["default"].setdefault("OPTIONS", {}).update(
        {
            "transaction_mode": "IMMEDIATE",
            "timeout": 20,
            "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
        }
    )
    # The test database is a file too, not Django's in-memory shared cache: its table locks fail at once
    # ("database table is locked") when a test reads while the inline runner's thread writes, where a file
    # in WAL mode waits, as the product does.
    DATABASES["default"]["TEST"] = {"NAME": str(Path(tempfile.gettempdir()) / f"chaoslm-test-{os.getpid()}.sqlite3")}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

REDIS_URL = env_str("REDIS_URL", "")
# With Redis, which of channels_redis' layers carries the live pushes between processes: "pubsub" (Redis
# publish/subscribe: one publish a push, no capacity, nothing kept for a subscriber that is not listening; the
# default) or "core" (a list per channel, groups as sorted sets, a capacity per channel). Who watches what is kept
# apart from either (chaoslm/live.py's presence). docs/serving-a-crowd.md has the figures of both.
CHAOSLM_CHANNEL_LAYER = env_str("CHAOSLM_CHANNEL_LAYER", "pubsub")
if CHAOSLM_CHANNEL_LAYER not in {"core", "pubsub"}:
    raise ImproperlyConfigured(f"CHAOSLM_CHANNEL_LAYER must be 'core' or 'pubsub', not {CHAOSLM_CHANNEL_LAYER!r}")
# Redis' publish/subscribe channels are one namespace for the whole server, whatever database a client selects:
# two deployments on one Redis (databases 1 and 2, say) would each hear the other's pushes to a group of the same
# name ("room-1"). The pubsub layer's channels carry this prefix, by default one of the database's own.
CHAOSLM_CHANNEL_PREFIX = env_str("CHAOSLM_CHANNEL_PREFIX", f"chaoslm-db{urlsplit(REDIS_URL).path.strip('/') or 0}:")
if REDIS_URL and CHAOSLM_CHANNEL_LAYER == "pubsub":
    CHANNEL_LAYERS = {
        "default": {
            "BACKEND": "channels_redis.pubsub.RedisPubSubChannelLayer",
            "CONFIG": {"hosts": [REDIS_URL], "prefix": CHAOSLM_CHANNEL_PREFIX},
        }
    }
elif REDIS_URL:
    CHANNEL_LAYERS = {
        "default": {
            "BACKEND": "channels_redis.core.RedisChannelLayer",
            # A socket's receive blocks in Redis for up to 5 s (channels_redis' BZPOPMIN), and redis-py 8
            # times a read out after 5 s by default: the two raced, and an idle page's socket died every
            # few seconds, losing the pushes sent while it reconnected. Reads may wait longer than a block.
            "CONFIG": {"hosts": [{"address": REDIS_URL, "socket_timeout": 30}], "capacity": 1500},
        }
    }
else:
    CHANNEL_LAYERS = {
        "default": {"BACKEND": "chaoslm.embedded_layer.EmbeddedChannelLayer", "CONFIG": {"capacity": 1500}}
    }

# How many bytes a live page's socket may leave unread on the server (beyond its first catch-up) before it is
# closed and told to catch up again (chaoslm/consumers.py): the bound on a slow reader's cost.
CHAOSLM_LIVE_BACKLOG_BYTES = int(env_number("CHAOSLM_LIVE_BACKLOG_BYTES", 1_000_000, int))

# The cache holds the start rate limit's counters: in Redis when there is one, so every web process
# shares them; else in this process's memory.
if REDIS_URL:
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": REDIS_URL}}
else:
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}

# Where debates run: "inline" (a background thread of the web process) or "celery".
CHAOSLM_RUNNER = env_str("CHAOSLM_RUNNER", "inline")
# The site's address, for the page addresses the command line prints (`make run` serves 127.0.0.1:8000), and
# the user who owns what the command line creates when it names none (`make run` creates it: ensure_admin).
CHAOSLM_SITE_URL = env_str("CHAOSLM_SITE_URL", "http://127.0.0.1:8000").rstrip("/")
CHAOSLM_ADMIN_USER = env_str("CHAOSLM_ADMIN_USER", "admin")
if CHAOSLM_RUNNER not in {"inline", "celery"}:
    raise ImproperlyConfigured(f"CHAOSLM_RUNNER must be 'inline' or 'celery', not {CHAOSLM_RUNNER!r}")

if CHAOSLM_RUNNER == "celery" and not REDIS_URL:
    raise ImproperlyConfigured(
        "CHAOSLM_RUNNER=celery needs REDIS_URL: Celery needs a broker, and the in-memory channel layer "
        "cannot carry live pushes from worker processes to the web processes."
    )

# The Celery app (`celery -A config` finds it too): the core names it only by this path (chaoslm/runner.py).
CHAOSLM_CELERY_APP = "config.celery.app"
CELERY_BROKER_URL = REDIS_URL or "memory://"
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
# Redis redelivers a task whose worker vanished after this many seconds; keep it above the longest
# debate. The stalled-debate sweep below resumes a killed worker's debate much sooner.
CELERY_BROKER_TRANSPORT_OPTIONS = {"visibility_timeout": int(env_number("CHAOSLM_TASK_VISIBILITY_TIMEOUT", 3600, int))}
# A debate whose status says running but that made no progress for this long is resumed by the sweep.
CHAOSLM_STALLED_AFTER = env_number("CHAOSLM_STALLED_AFTER", 300.0)
# The inline runner's sweep (work whose process ended, overdue webhook deliveries) runs as the server starts and
# again this often, in seconds, while it serves. A debate whose process ended is resumed at the next sweep whatever
# its age; CHAOSLM_STALLED_AFTER is for work whose process cannot be told (a worker on another host).
CHAOSLM_SWEEP_EVERY = env_number("CHAOSLM_SWEEP_EVERY", 15.0)
# A room's manual round or auto loop holds the room (one at a time, whichever process runs it) and
# renews that hold every CHAOSLM_ROOM_POLL seconds, which is also how soon a loop on a Celery worker
# notices its owner stopped auto mode. A hold a crashed process left behind lapses after CHAOSLM_ROOM_HOLD.
CHAOSLM_ROOM_POLL = env_number("CHAOSLM_ROOM_POLL", 0.5)
CHAOSLM_ROOM_HOLD = env_number("CHAOSLM_ROOM_HOLD", 30.0)
# What one user may run at once, and how often they may start something (chaoslm/limits.py). Staff
# are exempt unless CHAOSLM_LIMITS_EXEMPT_STAFF is off.
CHAOSLM_MAX_RUNNING_DEBATES = int(env_number("CHAOSLM_MAX_RUNNING_DEBATES", 4, int))
CHAOSLM_MAX_AUTO_ROOMS = int(env_number("CHAOSLM_MAX_AUTO_ROOMS", 2, int))
# Every kind of batch's debates (tournaments' and experiments'), over all of a user's batches; the old name,
# from when tournaments were the only batches, still works.
CHAOSLM_MAX_RUNNING_BATCH_DEBATES = int(
    env_number("CHAOSLM_MAX_RUNNING_BATCH_DEBATES", env_number("CHAOSLM_MAX_RUNNING_MATCHES", 8, int), int)
)
renamed("CHAOSLM_MAX_RUNNING_MATCHES", "CHAOSLM_MAX_RUNNING_BATCH_DEBATES")
CHAOSLM_STARTS_PER_MINUTE = int(env_number("CHAOSLM_STARTS_PER_MINUTE", 10, int))
CHAOSLM_LIMITS_EXEMPT_STAFF = env_bool("CHAOSLM_LIMITS_EXEMPT_STAFF", True)
# Every user's monthly spend on models, in dollars, unless the admin sets theirs (chaoslm/costs.py, docs/costs.md);
# empty: no budget.
CHAOSLM_DEFAULT_MONTHLY_BUDGET = env_str("CHAOSLM_DEFAULT_MONTHLY_BUDGET", "").strip()
try:
    if CHAOSLM_DEFAULT_MONTHLY_BUDGET and not float(CHAOSLM_DEFAULT_MONTHLY_BUDGET) >= 0:
        raise ValueError
except ValueError:
    raise ImproperlyConfigured(
        "CHAOSLM_DEFAULT_MONTHLY_BUDGET must be an amount of dollars such as 20 or 7.50, "
        f"not {CHAOSLM_DEFAULT_MONTHLY_BUDGET!r}"
    ) from None
# The audience's poll (docs/audience.md): the after-vote stays open this many minutes after the debate ends
# (unless its owner closes it sooner); one address may cast this many votes a minute (changes included), and
# an anonymous voter's signed cookie is honoured for this many days.
CHAOSLM_POLL_AFTER_MINUTES = env_number("CHAOSLM_POLL_AFTER_MINUTES", 30.0)
CHAOSLM_POLL_VOTES_PER_MINUTE = int(env_number("CHAOSLM_POLL_VOTES_PER_MINUTE", 30, int))
CHAOSLM_POLL_COOKIE_DAYS = env_number("CHAOSLM_POLL_COOKIE_DAYS", 30.0)
# The longest an owner may hold a debate's start so an audience can gather (debates/hold.py), in minutes.
CHAOSLM_HOLD_MAX_MINUTES = int(env_number("CHAOSLM_HOLD_MAX_MINUTES", 60, int))
# The most characters of material (a passage, a question and its answers, a case file) a debate may carry beyond
# its topic (debates/setup.py): the form, the API and the command line refuse more.
CHAOSLM_MAX_MATERIAL = int(env_number("CHAOSLM_MAX_MATERIAL", 50_000, int))
CELERY_BEAT_SCHEDULE = {
    "recover-stalled-debates": {"task": "debates.tasks.recover_stalled", "schedule": 60.0},
    "sweep-batches": {"task": "batches.tasks.sweep_batches", "schedule": 60.0},
    "resume-auto-rooms": {"task": "rooms.tasks.resume_auto_rooms", "schedule": 60.0},
    "sweep-webhooks": {"task": "api.tasks.sweep_webhooks", "schedule": 60.0},
}
# How often a running batch (a tournament, an experiment) looks again for debates to start when none of its debates
# finished in between (a finished debate makes it look at once); also how often its Celery tick task re-enqueues.
# The old name, from when tournaments were the only batches, still works.
CHAOSLM_BATCH_TICK = env_number("CHAOSLM_BATCH_TICK", env_number("CHAOSLM_TOURNAMENT_TICK", 2.0))
renamed("CHAOSLM_TOURNAMENT_TICK", "CHAOSLM_BATCH_TICK")
# While a tournament runs, its page's leaderboard is refitted at most this often (seconds).
CHAOSLM_TOURNAMENT_REPORT_EVERY = env_number("CHAOSLM_TOURNAMENT_REPORT_EVERY", 3.0)
# A process that serves pages imports scipy and statsmodels in the background after its first request,
# so its first tournament report does not wait seconds for them.
CHAOSLM_PRELOAD_REPORT_LIBRARIES = env_bool("CHAOSLM_PRELOAD_REPORT_LIBRARIES", True)

# The default LLM endpoint: the standard OpenAI variables, else the embedded local model.
OPENAI_BASE_URL = env_str("OPENAI_BASE_URL", "")
OPENAI_API_KEY = env_str("OPENAI_API_KEY", "")
CHAOSLM_DEFAULT_MODEL = env_str("CHAOSLM_DEFAULT_MODEL", "gpt-4o-mini")
# The GGUF the embedded model serves: empty for the shipped SmolLM2-135M, else a path or `owner/repo:file.gguf`.
CHAOSLM_LOCAL_MODEL = env_str("CHAOSLM_LOCAL_MODEL", "")
CHAOSLM_LOCAL_MODEL_HOST = env_str("CHAOSLM_LOCAL_MODEL_HOST", "127.0.0.1")
CHAOSLM_LOCAL_MODEL_PORT = int(env_number("CHAOSLM_LOCAL_MODEL_PORT", 8081, int))
# 0: chosen by chaoslm/llm/local_model.py (`LocalModel.threads`): one for the shipped model, half the cores for another.
CHAOSLM_LOCAL_MODEL_THREADS = int(env_number("CHAOSLM_LOCAL_MODEL_THREADS", 0, int))
CHAOSLM_LOCAL_MODEL_CONTEXT = int(env_number("CHAOSLM_LOCAL_MODEL_CONTEXT", 8192, int))
# How many calls the embedded model answers at once. 0: chosen by local_model.py (`LocalModel.slots`): one a core
# for the shipped model, one for another.
CHAOSLM_LOCAL_SLOTS = int(env_number("CHAOSLM_LOCAL_SLOTS", 0, int))
# The most tokens a reply of the embedded model may have (0: the persona's max_tokens): the shipped personas ask
# for 400, which on two busy cores made the default duel take eight minutes.
CHAOSLM_LOCAL_MAX_TOKENS = int(env_number("CHAOSLM_LOCAL_MAX_TOKENS", 160, int))

# Gateway policy.
CHAOSLM_LLM_TIMEOUT = env_number("CHAOSLM_LLM_TIMEOUT", 60.0)
CHAOSLM_LLM_MAX_RETRIES = int(env_number("CHAOSLM_LLM_MAX_RETRIES", 3, int))
CHAOSLM_LLM_BACKOFF = env_number("CHAOSLM_LLM_BACKOFF", 0.5)
CHAOSLM_LLM_MAX_RETRY_AFTER = env_number("CHAOSLM_LLM_MAX_RETRY_AFTER", 120.0)

# The JSON API (docs/api.md): calls one token may make a minute (0: no limit); past it, 429 with Retry-After.
CHAOSLM_API_CALLS_PER_MINUTE = int(env_number("CHAOSLM_API_CALLS_PER_MINUTE", 600, int))
# How often an open event stream (GET /api/v1/debates/{id}/events) looks for new events and checks that its
# token is still good (seconds): a revoked token's stream ends within this.
CHAOSLM_API_STREAM_TICK = env_number("CHAOSLM_API_STREAM_TICK", 0.5)
# Webhooks (api/webhooks.py): a delivery is tried this many times in all, waiting CHAOSLM_WEBHOOK_BACKOFF seconds
# after the first failure and twice as long after each next one; an attempt gives up after CHAOSLM_WEBHOOK_TIMEOUT.
CHAOSLM_WEBHOOK_ATTEMPTS = int(env_number("CHAOSLM_WEBHOOK_ATTEMPTS", 5, int))
CHAOSLM_WEBHOOK_BACKOFF = env_number("CHAOSLM_WEBHOOK_BACKOFF", 10.0)
CHAOSLM_WEBHOOK_TIMEOUT = env_number("CHAOSLM_WEBHOOK_TIMEOUT", 10.0)
# Webhooks reach public addresses only: loopback, private, link-local (cloud metadata), shared and reserved
# ranges are refused, after DNS resolution and at each redirect too. Comma-separated networks allowed anyway,
# e.g. "127.0.0.1/32" for a receiver on this machine. Empty: none.
CHAOSLM_WEBHOOKS_ALLOW_NETWORKS = env_str("CHAOSLM_WEBHOOKS_ALLOW_NETWORKS", "")

CHAOSLM_TRANSCRIPTS_DIR = Path(env_str("CHAOSLM_TRANSCRIPTS_DIR", str(BASE_DIR / "transcripts")))
CHAOSLM_PERSONA_MAX_BYTES = int(env_number("CHAOSLM_PERSONA_MAX_BYTES", 256 * 1024, int))
# Protocol cards (debates/format_cards.py): the largest card's YAML, and the most LLM calls a debate of a person's
# card may make at its options' largest values (checked when the card is saved).
CHAOSLM_CARD_MAX_BYTES = int(env_number("CHAOSLM_CARD_MAX_BYTES", 64 * 1024, int))
CHAOSLM_CARD_MAX_CALLS = int(env_number("CHAOSLM_CARD_MAX_CALLS", 400, int))

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
]
# Failed logins are throttled by django-axes, per account and per client address apart: after
# CHAOSLM_LOGIN_FAILURE_LIMIT failures in a row for one username, or from one address, further attempts
# (the site's login and the admin's alike) get the lockout page (429) until CHAOSLM_LOGIN_COOLOFF_MINUTES
# pass with no new attempt. Attempts are stored in the database, which every web process shares.
AUTHENTICATION_BACKENDS = ["axes.backends.AxesStandaloneBackend", "django.contrib.auth.backends.ModelBackend"]
AXES_ENABLED = env_bool("CHAOSLM_LOGIN_THROTTLE", True)
AXES_FAILURE_LIMIT = int(env_number("CHAOSLM_LOGIN_FAILURE_LIMIT", 5, int))
AXES_COOLOFF_TIME = timedelta(minutes=env_number("CHAOSLM_LOGIN_COOLOFF_MINUTES", 15.0))
AXES_LOCKOUT_PARAMETERS = ["username", "ip_address"]
AXES_RESET_ON_SUCCESS = True
AXES_LOCKOUT_CALLABLE = "chaoslm.security.lockout_response"
AXES_CLIENT_IP_CALLABLE = "chaoslm.security.client_ip"
# Axes logs every attempt at INFO and keeps a row for each successful login: the failures are what it needs.
AXES_DISABLE_ACCESS_LOG = True
AXES_VERBOSE = False
LOGIN_URL = "/accounts/login/"
LOGIN_REDIRECT_URL = "/"
LOGOUT_REDIRECT_URL = "/"
# Whether strangers may create accounts at /accounts/signup/. Off: the admin creates users.
CHAOSLM_SIGNUP = env_bool("CHAOSLM_SIGNUP", False)

LANGUAGE_CODE = "en-us"
TIME_ZONE = env_str("CHAOSLM_TIME_ZONE", "UTC")
USE_I18N = True
USE_TZ = True

# The content security policy every page is sent (django-csp). Scripts only from the site's own files: no
# inline script, no handler attributes, no eval (htmx's is turned off in base.html). Style sheets only from
# the site too, but style attributes are allowed: the pages set a card's place in the transcript, a progress
# bar's widths and a chart's colours that way, numbers and colours the server computed, never model text,
# and a style attribute cannot run script. Images from the site and data: URLs; connections (fetches and
# websockets) only to the site's own origin.
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": ["'self'"],
        "script-src": ["'self'"],
        "style-src": ["'self'"],
        "style-src-attr": ["'unsafe-inline'"],
        "img-src": ["'self'", "data:"],
        "connect-src": ["'self'"],
        "font-src": ["'self'"],
        "object-src": ["'none'"],
        "base-uri": ["'none'"],
        "form-action": ["'self'"],
        "frame-ancestors": ["'none'"],
    }
}

# HTTPS and cookies in production (see docs/operations.md); off while debugging locally.
SECURE_SSL_REDIRECT = env_bool("CHAOSLM_SSL_REDIRECT", not DEBUG)
SESSION_COOKIE_SECURE = env_bool("CHAOSLM_SECURE_COOKIES", not DEBUG)
CSRF_COOKIE_SECURE = SESSION_COOKIE_SECURE
SECURE_HSTS_SECONDS = int(env_number("CHAOSLM_HSTS_SECONDS", 0, int))
SECURE_HSTS_INCLUDE_SUBDOMAINS = SECURE_HSTS_SECONDS > 0
SECURE_HSTS_PRELOAD = env_bool("CHAOSLM_HSTS_PRELOAD", False)
CHAOSLM_BEHIND_PROXY = env_bool("CHAOSLM_BEHIND_PROXY", False)
if CHAOSLM_BEHIND_PROXY:
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = BASE_DIR / "staticfiles"

# The largest request body the site accepts (bytes): a bigger one gets a 413 from its Content-Length before
# it is read (chaoslm/security.py). Django's own limit on form fields is the same number, a second line.
CHAOSLM_MAX_REQUEST_BYTES = int(env_number("CHAOSLM_MAX_REQUEST_BYTES", 4 * 1024 * 1024, int))
DATA_UPLOAD_MAX_MEMORY_SIZE = CHAOSLM_MAX_REQUEST_BYTES
# An uploaded file below this is kept in memory rather than a temporary file: every accepted body fits.
FILE_UPLOAD_MAX_MEMORY_SIZE = CHAOSLM_MAX_REQUEST_BYTES

# /metrics (chaoslm/metrics.py) answers clients in these comma-separated networks (default: loopback only; behind
# CHAOSLM_BEHIND_PROXY the client is the last X-Forwarded-For address), and any client sending
# "Authorization: Bearer <CHAOSLM_METRICS_TOKEN>" when that is set. Everyone else gets a 404.
CHAOSLM_METRICS_ALLOW = env_str("CHAOSLM_METRICS_ALLOW", "127.0.0.0/8,::1/128")
try:
    CHAOSLM_METRICS_ALLOW_NETWORKS = [
        ipaddress.ip_network(n.strip(), strict=False) for n in CHAOSLM_METRICS_ALLOW.split(",") if n.strip()
    ]
except ValueError as error:
    raise ImproperlyConfigured(f"CHAOSLM_METRICS_ALLOW must be comma-separated networks: {error}") from None
CHAOSLM_METRICS_TOKEN = env_str("CHAOSLM_METRICS_TOKEN", "")
# /readyz (chaoslm/health.py): how long each check (database, Redis, Celery's ping, the model endpoint) may take.
CHAOSLM_HEALTH_TIMEOUT = env_number("CHAOSLM_HEALTH_TIMEOUT", 1.0)
# A Celery worker's own /metrics (its model calls): served on this port and address when the port is not 0.
CHAOSLM_WORKER_METRICS_PORT = int(env_number("CHAOSLM_WORKER_METRICS_PORT", 0, int))
CHAOSLM_WORKER_METRICS_ADDR = env_str("CHAOSLM_WORKER_METRICS_ADDR", "127.0.0.1")

# How log lines are written: "text" (the message, then what it is about: " [debate=12 owner=olive]") or "json" (one
# object a line, for log collectors). chaoslm/logging_context.py.
CHAOSLM_LOG_FORMAT = env_str("CHAOSLM_LOG_FORMAT", "text")
if CHAOSLM_LOG_FORMAT not in {"text", "json"}:
    raise ImproperlyConfigured(f"CHAOSLM_LOG_FORMAT must be 'text' or 'json', not {CHAOSLM_LOG_FORMAT!r}")

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "filters": {"context": {"()": "chaoslm.logging_context.ContextFilter"}},
    "formatters": {
        "text": {"()": "chaoslm.logging_context.TextFormatter"},
        "json": {"()": "chaoslm.logging_context.JsonFormatter"},
    },
    "handlers": {
        "console": {"class": "logging.StreamHandler", "filters": ["context"], "formatter": CHAOSLM_LOG_FORMAT}
    },
    "loggers": {
        "chaoslm": {"handlers": ["console"], "level": env_str("CHAOSLM_LOG_LEVEL", "INFO")},
        # The HTTP client logs every request at INFO: a line an LLM call on a worker logging at INFO, with
        # nothing the gateway's own warnings (retries, failures) do not say.
        "httpx2": {"level": "WARNING"},
        # A crashed request's traceback goes to the console whatever DEBUG says (Django's own console handler
        # speaks only under DEBUG): `serve` turns DEBUG off for its pages, and its console is where to read it.
        "django.request": {"handlers": ["console"], "level": "ERROR", "propagate": False},
    },
}
