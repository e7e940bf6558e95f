"""The crowd's pages: worker entry and exit, the organizer actions on the job page, their forms,
the organizer API and the framing middleware."""
