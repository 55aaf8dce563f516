"""filterkit's built-in stages, registered through the same hooks as any third-party plugin."""
