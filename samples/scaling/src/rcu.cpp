// SPDX-License-Identifier: GPL-2.0-or-later
#include "rcu.h"

namespace lockscope::scaling::rcu {

namespace {

struct Registration {
    Registration() { urcu_memb_register_thread(); }
    ~Registration() { urcu_memb_unregister_thread(); }
};

} // namespace

void registerThread()
{
    // Its destructor unregisters the thread when it exits.
    thread_local Registration registration;
    threadRegistered = true;
}

} // namespace lockscope::scaling::rcu
