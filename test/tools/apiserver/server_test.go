package apiserver

import (
	"context"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
)

func TestStartRestart(t *testing.T) {
	s := Start(t)
	c := corev1client.NewForConfigOrDie(s.Config(AdminToken))
	ctx := context.Background()
	if _, err := c.Namespaces().Get(ctx, "kube-system", metav1.GetOptions{}); err != nil {
		t.Fatal(err)
	}
	s.StopAPIServer()
	if err := s.StartAPIServer(); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Namespaces().Get(ctx, "default", metav1.GetOptions{}); err != nil {
		t.Fatal(err)
	}
}
