#include "app/CommandLine.h"
#include "app/Headless.h"
#include "core/Error.h"

#include <iostream>
#include <string>
#include <vector>

using namespace sgdscope;

int main(int argc, char** argv)
{
    std::vector<std::string> args(argv + 1, argv + argc);
    CommandLine commandLine;
    try {
        commandLine = parseCommandLine(args);
    } catch (const SgdError& e) {
        std::cerr << "sgdscope: " << e.what() << '\n';
        return 2;
    }
    if (commandLine.help) {
        std::cout << helpText();
        return 0;
    }
    if (commandLine.version) {
        std::cout << "sgdscope 0.1.0\n";
        return 0;
    }
    if (commandLine.listPresets) {
        for (const auto& name : presetNames())
            std::cout << name << '\n';
        return 0;
    }
    installInterruptHandlers();
    return runHeadless(commandLine, nullptr);
}
