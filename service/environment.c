#include <string.h>
#include <sys/utsname.h>
#include <libvirt/libvirt.h>

#include "environment.h"
#include "cli.h"

static json_object *version_string(unsigned long v)
{
	char buf[48];
	snprintf(buf, sizeof(buf), "%lu.%lu.%lu", v / 1000000, (v / 1000) % 1000, v % 1000);
	return json_object_new_string(buf);
}

json_object *environment_describe(const char *libvirt_uri, const char *accelerator)
{
	json_object *env = json_object_new_object();
	json_object_object_add(env, "accelerator",
			       json_object_new_string(accelerator ? accelerator : "unknown"));
	json_object_object_add(env, "host_cores",
			       json_object_new_int((int)sysconf(_SC_NPROCESSORS_ONLN)));
	struct utsname u;
	if (uname(&u) == 0) {
		json_object_object_add(env, "host_kernel", json_object_new_string(u.release));
		json_object_object_add(env, "hostname", json_object_new_string(u.nodename));
	}
	json_object_object_add(env, "schedlab_version", json_object_new_string(SCHEDLAB_VERSION));
	virConnectPtr c = virConnectOpenReadOnly(libvirt_uri ? libvirt_uri : "qemu:///system");
	unsigned long qemu = 0, lib = 0;
	if (c && virConnectGetVersion(c, &qemu) == 0 && qemu)
		json_object_object_add(env, "qemu_version", version_string(qemu));
	else
		json_object_object_add(env, "qemu_version", json_object_new_string("unknown"));
	if (c && virConnectGetLibVersion(c, &lib) == 0 && lib)
		json_object_object_add(env, "libvirt_version", version_string(lib));
	else
		json_object_object_add(env, "libvirt_version", json_object_new_string("unknown"));
	if (c)
		virConnectClose(c);
	return env;
}
