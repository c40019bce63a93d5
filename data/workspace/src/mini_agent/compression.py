class ContextWindow:
    threshold = 1200
