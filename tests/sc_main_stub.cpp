// Tests get main() from Catch2; libsystemc still needs an sc_main symbol.
#include <systemc>

int sc_main(int, char*[]) { return 0; }
