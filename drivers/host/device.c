/* SPDX-License-Identifier: Apache-2.0 */
/* device.c: init (bind the core's services, read [driver.host] and the
 * CPU), the devices' properties, open (a pool of worker threads) and close. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "drivers/host/host.h"

static void read_cpuinfo(struct host_driver *d)
{
    snprintf(d->cpu_name, sizeof d->cpu_name, "host CPU");
    snprintf(d->vendor, sizeof d->vendor, "unknown");
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f)
        return;
    char line[512];
    int got_name = 0, got_vendor = 0;
    while (fgets(line, sizeof line, f) && !(got_name && got_vendor)) {
        char *colon = strchr(line, ':');
        if (!colon)
            continue;
        char *v = colon + 1;
        while (*v == ' ' || *v == '\t')
            v++;
        v[strcspn(v, "\n")] = '\0';
        if (!got_name && strncmp(line, "model name", 10) == 0) {
            snprintf(d->cpu_name, sizeof d->cpu_name, "%s", v);
            got_name = 1;
        } else if (!got_vendor && strncmp(line, "vendor_id", 9) == 0) {
            snprintf(d->vendor, sizeof d->vendor, "%s", v);
            got_vendor = 1;
        }
    }
    fclose(f);
}

trd_status_t host_init(const trd_driver_init_args_t *args, void **out)
{
    trd_status_t st = trd_drv_bind(args); /* first: everything after reports through it */
    if (st != TRD_OK)
        return st;
    struct host_driver *d = calloc(1, sizeof *d);
    if (!d)
        return trd_drv_error(TRD_ERR_NO_MEMORY, "out of memory");
    d->ndevices = 1;
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    d->threads = ncpu > 0 ? (uint32_t)ncpu : 1;
    /* the values are validated by the option table ([driver.host] in options/) */
    const char *v;
    if ((v = trd_drv_config(args, "devices")))
        d->ndevices = (uint32_t)strtoul(v, NULL, 10);
    if ((v = trd_drv_config(args, "threads")) && strtoul(v, NULL, 10) > 0)
        d->threads = (uint32_t)strtoul(v, NULL, 10);
    d->catch_faults = !((v = trd_drv_config(args, "catch_faults")) && strcmp(v, "false") == 0);
    host_memory_init(&d->mem, (v = trd_drv_config(args, "guarded_buffers")) ? strtoll(v, NULL, 10) : -1);
    read_cpuinfo(d);
    struct utsname u;
    snprintf(d->arch, sizeof d->arch, "%.31s", uname(&u) == 0 ? u.machine : "unknown");
    long pages = sysconf(_SC_PHYS_PAGES), psize = sysconf(_SC_PAGESIZE);
    d->memory = pages > 0 && psize > 0 ? (uint64_t)pages * (uint64_t)psize : 0;
    if (d->ndevices == 0 && args->note)
        snprintf(args->note, args->note_cap, "0 devices: [driver.host] devices = 0");
    *out = d;
    return TRD_OK;
}

void host_fini(void *driver)
{
    host_memory_fini(&((struct host_driver *)driver)->mem);
    free(driver);
}

trd_status_t host_device_count(void *driver, uint32_t *count)
{
    *count = ((struct host_driver *)driver)->ndevices;
    return TRD_OK;
}

trd_status_t host_device_props(void *driver, uint32_t ordinal, trd_device_props_t *p)
{
    struct host_driver *d = driver;
    if (ordinal >= d->ndevices)
        return trd_drv_error(TRD_ERR_NOT_FOUND, "host device %u does not exist", ordinal);
    p->kind = TRD_DEVICE_CPU;
    p->name = d->cpu_name;
    p->vendor = d->vendor;
    p->arch = d->arch;
    p->pci_bus_id = NULL;
    p->warp_size = 1;
    p->compute_units = d->threads;
    p->max_threads_per_block = 1024;
    p->memory_bytes = d->memory;
    p->max_shared_per_block = 0;
    p->max_shared_per_block_optin = 0;
    return TRD_OK;
}

trd_status_t host_device_open(void *driver, uint32_t ordinal, void **out)
{
    struct host_driver *d = driver;
    struct host_device *dev = calloc(1, sizeof *dev);
    if (!dev)
        return trd_drv_error(TRD_ERR_NO_MEMORY, "out of memory");
    dev->drv = d;
    dev->ordinal = ordinal;
    if (!host_pool_start(&dev->pool, d->threads)) {
        free(dev);
        return trd_drv_error(TRD_ERR_NO_MEMORY, "cannot start %u worker threads", d->threads);
    }
    pthread_mutex_init(&dev->streams_lock, NULL);
    *out = dev;
    return TRD_OK;
}

void host_device_close(void *device)
{
    struct host_device *dev = device;
    pthread_mutex_destroy(&dev->streams_lock);
    host_pool_stop(&dev->pool);
    free(dev);
}
