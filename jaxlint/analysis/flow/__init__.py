"""The ordered walk over each function (the frame, calls, guards) and the path engine it runs on."""
