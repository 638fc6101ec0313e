"""Compatibility re-export: every public example handler under its old ``toolcat.examples.handlers`` name.

The handlers now live in one module per namespace: :mod:`~toolcat.examples.files` (``file.*``),
:mod:`~toolcat.examples.onto` (``onto.*``, over :mod:`~toolcat.examples.onto_store`),
:mod:`~toolcat.examples.util` (``util.*``) and :mod:`~toolcat.examples.refactor`
(``refactor.rename_symbol``); the sandbox is explained in :mod:`~toolcat.examples._shared`. This
module is kept so catalogues built with the old targets (``toolcat.examples.handlers:file_read``)
keep running; new catalogues name the namespace module instead.
"""

from __future__ import annotations

from ._shared import SANDBOX_ENV, SKIP_DIRS, JSONDict, sandbox_root
from .files import (
    MAX_READ_BYTES,
    MAX_SEARCH_FILE_BYTES,
    file_copy,
    file_delete,
    file_dir,
    file_move,
    file_read,
    file_search,
    file_stat,
    file_write,
)
from .onto import (
    AGENT_IDENTITY,
    CLOSED_STATUSES,
    PRIORITY_RANK,
    TASK_STATUSES,
    onto_comment_add,
    onto_comment_list,
    onto_project_archive,
    onto_project_create,
    onto_project_get,
    onto_project_list,
    onto_project_update,
    onto_task_create,
    onto_task_delete,
    onto_task_get,
    onto_task_list,
    onto_task_search,
    onto_task_update,
    reset_store,
    seed_demo_data,
)
from .refactor import LANGUAGE_EXTENSIONS, MAX_DIFF_PREVIEW, refactor_rename_symbol
from .util import (
    util_json_query,
    util_math_eval,
    util_text_diff,
    util_text_summarize,
    util_text_word_count,
    util_time_convert,
    util_time_now,
)

__all__ = [
    "AGENT_IDENTITY",
    "CLOSED_STATUSES",
    "LANGUAGE_EXTENSIONS",
    "MAX_DIFF_PREVIEW",
    "MAX_READ_BYTES",
    "MAX_SEARCH_FILE_BYTES",
    "PRIORITY_RANK",
    "SANDBOX_ENV",
    "SKIP_DIRS",
    "TASK_STATUSES",
    "JSONDict",
    "file_copy",
    "file_delete",
    "file_dir",
    "file_move",
    "file_read",
    "file_search",
    "file_stat",
    "file_write",
    "onto_comment_add",
    "onto_comment_list",
    "onto_project_archive",
    "onto_project_create",
    "onto_project_get",
    "onto_project_list",
    "onto_project_update",
    "onto_task_create",
    "onto_task_delete",
    "onto_task_get",
    "onto_task_list",
    "onto_task_search",
    "onto_task_update",
    "refactor_rename_symbol",
    "reset_store",
    "sandbox_root",
    "seed_demo_data",
    "util_json_query",
    "util_math_eval",
    "util_text_diff",
    "util_text_summarize",
    "util_text_word_count",
    "util_time_convert",
    "util_time_now",
]
