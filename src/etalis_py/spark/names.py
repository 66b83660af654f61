"""Constants of replay: the internal column names of its tables, type codes, limits."""

DEFAULT_MASTER = "local[*,4]"       # local mode on all cores, up to 4 attempts per task
TRANSFER = "etalis__transfer"      # the hidden event that carries derived events between stages
FORMATS = ("parquet", "csv", "json", "jsonl")
BATCH_ROWS = 50_000                 # rows of an Arrow batch between Spark and its Python workers
FEED_LINES = 20_000                 # at most this many events of one key fed at once
MAX_ENGINES = 16                    # compiled engines kept by a worker process

# column names of the internal tables, unlikely to clash with a user's
ROW = "__etalis_row"
KIND = "__etalis_kind"
SIG = "__etalis_sig"
LINE = "__etalis_line"
TIME = "__etalis_t"
KEYS = "__etalis_keys"
KEY1 = "__etalis_key1"
REASON = "__etalis_reason"
TKIND = "__etalis_tkind"
CORRUPT = "_corrupt_record"
EVENT_LINE = "value"    # the one column of event lines read as text (Spark's text source)
PACKED = "__etalis_packed"          # an event's row in the packed columns of its task (stage 1 in the mapping's task)

# type codes of values, OR-ed to find a column's type
T_INT, T_FLOAT, T_TEXT, T_OTHER = 1, 2, 4, 8
# kinds of input time: a number of seconds, or a date
TK_NUMBER, TK_DATE = 1, 2

# the columns of the stages' tables (prefixed: stage 1 carries the input's own columns too)
S_KIND, S_SIG, S_LINE, S_T, S_ROW, S_PATH, S_KEYS, S_KEY, S_N, S_REASON, S_TKIND = (
    f"__e_{n}" for n in ("kind", "sig", "line", "t", "row", "path", "keys", "key", "n", "reason", "tkind"))
STAGE_SCHEMA = (f"{S_KIND} string, {S_SIG} string, {S_LINE} string, {S_T} double, {S_ROW} long, "
                f"{S_PATH} string, {S_KEYS} array<string>, {S_KEY} string, {S_N} long")
