"""The annotation app's pages: the annotator's work pages, the organizer pages, their forms and URLs."""
