#pragma once
// A core/ folder that is no layer of the rules: the test must name the folder.
