"""Where the roles lived before they moved to `quorum.roles`; kept so scripts outside Quorum that
import them from here (the side-by-side peers harness in `../shared/peers/` seeds its annotators this
way) keep working. Quorum's own code imports `quorum.roles`."""
import warnings

from quorum.roles import is_organizer, make_annotator, make_organizer, organizer_required

__all__ = ["is_organizer", "make_annotator", "make_organizer", "organizer_required"]

warnings.warn("annotation.roles moved to quorum.roles", DeprecationWarning, stacklevel=2)
