#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "run/environment.h"
#include "util/version.h"

json_object *environment_describe(struct guest_host *host, const char *accelerator)
{
	json_object *env = json_object_new_object();
	if (accelerator)
		json_object_object_add(env, "accelerator", json_object_new_string(accelerator));
	json_object_object_add(env, "host_cores",
			       json_object_new_int((int)sysconf(_SC_NPROCESSORS_ONLN)));
	struct utsname u;
	if (uname(&u) == 0) {
		json_object_object_add(env, "host_kernel", json_object_new_string(u.release));
		json_object_object_add(env, "hostname", json_object_new_string(u.nodename));
	}
	json_object_object_add(env, "schedlab_version", json_object_new_string(SCHEDLAB_VERSION));
	char qemu[32] = "unknown", libvirt[32] = "unknown";
	if (host && guest_host_versions(host, qemu, libvirt, NULL) < 0) {
		snprintf(qemu, sizeof(qemu), "unknown");
		snprintf(libvirt, sizeof(libvirt), "unknown");
	}
	json_object_object_add(env, "qemu_version", json_object_new_string(qemu));
	json_object_object_add(env, "libvirt_version", json_object_new_string(libvirt));
	if (host)
		json_object_object_add(env, "libvirt_uri",
				       json_object_new_string(guest_host_uri(host)));
	return env;
}
