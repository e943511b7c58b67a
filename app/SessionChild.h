#pragma once

namespace sgdscope {

/// `sgdscope --session-child`: the window's training session in a process of its own (a simulated cluster
/// needs one: SimGrid allows one platform per process). The window writes the settings as the first JSON
/// line on standard input, then commands (ui/ProgressJson.h: new settings, pause, stop); this writes what
/// the window shows as JSON lines on standard output, about 30 a second. It ends on "stop", on the end of
/// its input (the window is gone) or when the session fails (the error travels in the last line).
int runSessionChild();

} // namespace sgdscope
