// SPDX-License-Identifier: Apache-2.0
// HdbBenchGen: the C++ generator device server (devices/gen/README.md).
#include <tango.h>

#include <iostream>

int main(int argc, char *argv[]) {
    int rc = 0;
    try {
        Tango::Util *tg = Tango::Util::init(argc, argv);
        tg->server_init(false);
        std::cout << "Ready to accept request" << std::endl;
        tg->server_run();
    } catch (const std::bad_alloc &) {
        std::cerr << "HdbBenchGen: cannot allocate memory" << std::endl;
        rc = 1;
    } catch (const CORBA::Exception &e) {
        Tango::Except::print_exception(e);
        rc = 1;
    }
    try {
        Tango::Util::instance()->server_cleanup();
    } catch (...) {
    }
    return rc;
}
