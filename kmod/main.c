// SPDX-License-Identifier: GPL-2.0
/*
 * pvas.ko: Partitioned Virtual Address Space.  The misc device /dev/pvas,
 * its file operations and the module's init and exit.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/debugfs.h>
#include <linux/fs.h>
#include <linux/miscdevice.h>
#include <linux/module.h>
#include <linux/uaccess.h>

#include "pvas.h"

struct workqueue_struct *pvas_wq;
struct dentry *pvas_debugfs_root;
static DEFINE_MUTEX(pvas_create_lock);

static int pvas_open(struct inode *inode, struct file *file)
{
	file->private_data = NULL;
	return 0;
}

static int pvas_release(struct inode *inode, struct file *file)
{
	struct pvas_group *g = file->private_data;

	if (g)
		pvas_group_close(g);
	return 0;
}

static long pvas_ioc_create(struct file *file, void __user *uarg)
{
	struct pvas_ioc_create arg;
	struct pvas_group *g;
	long ret = 0;

	if (copy_from_user(&arg, uarg, sizeof(arg)))
		return -EFAULT;
	/* One group per fd: serialise CREATEs so the check holds. */
	mutex_lock(&pvas_create_lock);
	if (file->private_data) {
		ret = -EBUSY;
		goto out;
	}
	g = pvas_group_create(&arg);
	if (IS_ERR(g)) {
		ret = PTR_ERR(g);
		goto out;
	}
	if (copy_to_user(uarg, &arg, sizeof(arg))) {
		pvas_group_put(g);
		ret = -EFAULT;
		goto out;
	}
	/* Pairs with smp_load_acquire() in pvas_ioctl(): g is initialised. */
	smp_store_release(&file->private_data, g);
out:
	mutex_unlock(&pvas_create_lock);
	return ret;
}

static long pvas_ioctl(struct file *file, unsigned int cmd, unsigned long a)
{
	void __user *uarg = (void __user *)a;
	struct pvas_group *g;
	struct pvas_ioc_slot slot;
	struct pvas_ioc_owner owner;
	struct pvas_ioc_tasks tasks;
	long ret;

	if (cmd == PVAS_IOC_VERSION) {
		struct pvas_ioc_version v = { .version = PVAS_UAPI_VERSION };

		return copy_to_user(uarg, &v, sizeof(v)) ? -EFAULT : 0;
	}
	if (cmd == PVAS_IOC_CREATE)
		return pvas_ioc_create(file, uarg);

	/* Everything else needs the group of this fd. */
	g = smp_load_acquire(&file->private_data);
	switch (cmd) {
	case PVAS_IOC_RESERVE:
	case PVAS_IOC_JOIN:
	case PVAS_IOC_RELEASE:
		if (!g)
			return -ENOTTY;
		if (copy_from_user(&slot, uarg, sizeof(slot)))
			return -EFAULT;
		if (slot.flags)
			return -EINVAL;
		if (cmd == PVAS_IOC_RESERVE)
			return pvas_slot_reserve(g, slot.slot);
		if (cmd == PVAS_IOC_JOIN)
			return pvas_slot_join(g, slot.slot);
		return pvas_slot_release(g, slot.slot);
	case PVAS_IOC_OWNER:
		if (!g)
			return -ENOTTY;
		if (copy_from_user(&owner, uarg, sizeof(owner)))
			return -EFAULT;
		ret = pvas_owner(g, &owner);
		if (!ret && copy_to_user(uarg, &owner, sizeof(owner)))
			ret = -EFAULT;
		return ret;
	case PVAS_IOC_TASKS:
		if (!g)
			return -ENOTTY;
		if (copy_from_user(&tasks, uarg, sizeof(tasks)))
			return -EFAULT;
		ret = pvas_tasks_query(g, &tasks);
		if (!ret && put_user(tasks.count,
				     &((struct pvas_ioc_tasks __user *)uarg)->count))
			ret = -EFAULT;
		return ret;
	}
	return -ENOTTY;
}

static const struct file_operations pvas_fops = {
	.owner = THIS_MODULE,
	.open = pvas_open,
	.release = pvas_release,
	.unlocked_ioctl = pvas_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
	.llseek = noop_llseek,
};

static struct miscdevice pvas_misc = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = PVAS_DEVICE_NAME,
	.fops = &pvas_fops,
	.mode = 0666,
};

static int __init pvas_init(void)
{
	int ret;

	pvas_wq = alloc_workqueue("pvas", WQ_UNBOUND, 0);
	if (!pvas_wq)
		return -ENOMEM;
	pvas_debugfs_init();
	ret = pvas_tracepoints_init();
	if (ret)
		goto fail_tp;
	ret = misc_register(&pvas_misc);
	if (ret)
		goto fail_misc;
	pr_info("version %s loaded, uapi version %d\n", PVAS_MODULE_VERSION,
		PVAS_UAPI_VERSION);
	return 0;

fail_misc:
	pvas_tracepoints_exit();
fail_tp:
	debugfs_remove(pvas_debugfs_root);
	destroy_workqueue(pvas_wq);
	return ret;
}

static void __exit pvas_exit(void)
{
	/*
	 * No group exists: each holds a module reference.  The work that
	 * dropped the last one may still be returning: destroying the
	 * workqueue waits for it.
	 */
	misc_deregister(&pvas_misc);
	pvas_tracepoints_exit();
	destroy_workqueue(pvas_wq);
	debugfs_remove(pvas_debugfs_root);
	WARN_ON(!xa_empty(&pvas_tasks));
}

module_init(pvas_init);
module_exit(pvas_exit);
MODULE_LICENSE("GPL");
MODULE_AUTHOR("PVAS developers");
MODULE_DESCRIPTION("Partitioned Virtual Address Space: tasks in partitions of one mm");
MODULE_VERSION(PVAS_MODULE_VERSION);
