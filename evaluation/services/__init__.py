"""Writes for the evaluation app: plain functions, one transaction each. See DESIGN.md.

This package re-exports its submodules' functions for the views, the API and the commands. The
submodules import each other directly, never this package, and never a task module: queuing
work is for `evaluation.results_requests`, so `evaluation.tasks` can import the services.
"""
from .campaigns import (  # noqa: F401
    compute_campaign_results,
    create_campaign,
    create_finalist_campaign,
    refresh_inputs_version,
    select_finalists,
    set_adaptive,
)
from .chats import create_chat_job, pause_system, resume_system  # noqa: F401
from .crowd import (  # noqa: F401
    create_crowd_campaign,
    create_crowd_job,
    launch_crowd_job,
    record_response_ratings,
    sync_campaign_ratings,
)
from .exports import export_campaign  # noqa: F401
from .fed import create_fed_set_from_chats, import_fed_static, launch_fed_job, review_candidate  # noqa: F401
from .imports import (  # noqa: F401
    EvaluationInputError,
    add_ground_truth_entry,
    import_entries,
    import_entry,
    import_human_eval,
    import_objective_scores,
    import_test_set,
    import_test_set_logs,
)
from .judges import compute_judge_report, import_judge_scores  # noqa: F401
from .scheduled import link_entry_system, run_due_schedules, run_schedule, set_schedule  # noqa: F401
from .screening import review_chat, screen_chat_job, screen_chat_response  # noqa: F401
from .systems import check_system_again, import_goals, register_system  # noqa: F401
from .uploads import (  # noqa: F401
    import_entries_upload,
    import_human_eval_archive,
    import_test_set_logs_upload,
    import_test_set_upload,
)
